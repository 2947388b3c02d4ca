"""The web app's routes by area: :mod:`~kgqa.web.routes.pages` (home, leaderboards,
comparisons, datasets), :mod:`~kgqa.web.routes.experiments` (an experiment's page, status,
downloads, re-run), :mod:`~kgqa.web.routes.new` (the New-experiment form). Each module's
``ROUTES`` lists its Starlette routes; the handlers find the app's shared parts with
:func:`kgqa.web.context.web_of`."""
