"""The reader's scores of the generation reading sheets (docs/guide/generation-reading.md): per KG,
(regex on the question, score 0/1/2, reason), first match wins. Written by a person after reading
each question next to its query and answer (questions with the same frame and the same kind of
topic get the same score); questions no rule matches are printed, to be read and a rule added.

    python bench/generation_sheets.py --n 40 --out sheets.md
    python bench/generation_scores.py sheets.md scores.json
    python bench/generation_sheets.py --n 40 --scores scores.json --out sheets.md
"""
import json, re, sys
RULES = {
 "ck25": [
  ('^What are the BOM parts of [^?]*\\?$', 2, ''),
  ('^How many hardware have a (depth|width|height|weight) \\(.*\\) of \\d+\\?$', 1, "a count by a statistic; 'hardware' as a count noun"),
  ('^Which service has the category [^?]*\\?$', 2, ''),
  ('^Which manager is a member of [^?]*\\?$', 2, ''),
  ('^Which BOM part has a quantity of \\d+\\?$', 1, 'a lookup by a quantity'),
  ('^Which BOM part has a part that has a .* (greater than|less than|of at least|of at most) .*\\?$', 1, 'two hops with a comparison: clear, awkward'),
  ('^Which supplier has a long (greater than|less than|of at least|of at most) .*\\?$', 0, "'long' (a longitude column) is not a word a reader understands here"),
  ('^Which supplier has the address country [^?]*\\?$', 1, "'address country' is schema.org's word; a person says 'located in'"),
  ('^How many employees are product managers of hardware that .* is responsible for\\?$', 1, 'long; clear'),
  ('^Which department is [^?]* a member of\\?$', 2, ''),
  ('^How many prices have an amount of [\\d.]+\\?$', 1, 'a count of price nodes by amount: a person asks how many products cost that'),
  ('^What is the price of [^?]*\\?$', 2, ''),
  ('^Which hardware has a (depth|width|height|weight) \\(.*\\) (greater than|less than|of at least|of at most) \\d+\\?$', 2, ''),
  (r"^What is the (smallest|largest) long of any supplier\?$", 0, "'long' (a longitude column, now read as a number) is not a word a reader understands here"),
  (r"^Which BOM part has the (largest|smallest) quantity\?$", 2, ""),
  (r"^Who is the product manager of [^?]*\?$", 2, ""),
  (r"^Which hardware has a (depth|width|height|weight) \(.*\) of \d+\?$", 1, "a lookup by a statistic (up to 100 answers)"),
  (r"^What is the (smallest|largest) amount of any price\?$", 1, "a person asks for the lowest/highest price, not 'the amount of any price'"),
  (r"^What is the (smallest|largest) (weight|depth|width|height) \(.*\) of any hardware\?$", 2, ""),
  (r"^(Who|Which employee) is the product manager of hardware that .* is responsible for\?$", 2, ""),
  (r"^How many categories does .* have\?$", 2, ""),
  (r"^Which service is eligible for .*\?$", 2, ""),
  (r"^Which hardware is .* eligible for\?$", 2, ""),
  (r"^What are the areas of expertise of an employee that has the area of expertise .*\?$", 1, "siblings through one employee: clear but awkward"),
  (r"^Which department is responsible for hardware that .* and that has a .* of (at most|at least|less than|greater than) .*\?$", 1, "long: two conditions on the hardware"),
  (r"^Which employee is a member of a department that is responsible for .*\?$", 2, ""),
  (r"^Which service has the price .*\?$", 1, "a lookup by price"),
  (r"^Who is the manager of .*\?$", 2, ""),
  (r"^Which employee has the manager .*\?$", 2, ""),
  (r"^Which department is responsible for [^,]*\?$", 2, ""),
  (r"^Which supplier has the address locality .*\?$", 1, "'address locality' is schema.org's word; a person says 'located in'"),
  (r"^How many departments are responsible for hardware that has the supplier .*\?$", 2, ""),
 ],
 "autry-museum": [
  (r"^Which man-made object's production (began|ended) [^?]*\?$", 2, "'Which object's production began earliest?': how a person could put it ('man-made object' is CIDOC's, but clear)"),
  (r"^Which actor's (beginning|end) of existence (began|ended) [^?]*\?$", 1, "CIDOC's 'beginning/end of existence' (a birth, a death): understandable, odd"),
  ('^How many actors are [A-Z][\\w-]*\\?$', 2, ''),
  ('^Which man-made object was produced by a production that (began|ended) .*\\?$', 1, "CIDOC wording ('produced by a production'); a person asks which object was made earliest/before X"),
  ('^Which actor was (taken out of existence by an end of existence|brought into existence by a beginning of existence) .*\\?$', 0, "CIDOC's 'taken out of existence by an end of existence': a person asks who died/was born before X"),
  ('^How many type assignments was .* classified by\\?$', 1, "CIDOC 'type assignments' and a stranded 'by'"),
  (r"^Who is [A-Z][\w-]*\?$", 2, "'Who is American?': the nationality group said as a person says it"),
  (r"^Which man-made object is dated [^?]*\?$", 2, "'is dated circa 1870' (the production's time-span); 'man-made object' is CIDOC's, but clear"),
  (r"^How many linguistic objects is .* referred to by\?$", 1, "CIDOC's 'linguistic objects' and a stranded 'referred to by': a person asks how many texts describe X"),
  (r"^How many productions are carried out by .*\?$", 1, "CIDOC wording ('productions ... carried out by'); a person asks how many works X made"),
  (r"^What is the homepage of .*\?$", 2, "readable (the answer is the same page for every object)"),
  (r"^Which group is .* a current or former member of\?$", 1, "CIDOC's 'current or former member of' for a nationality"),
  (r"^Who are the current or former members of .*\?$", 1, "'members of Danish': a nationality as a group, CIDOC wording"),
  (r"^What is the type of .*\?$", 2, ""),
  (r"^Which man-made object has the type .*\?$", 2, "'man-made object' is CIDOC's, but clear"),
  (r"^What is the time-span of a production that .* was produced by\?$", 1, "CIDOC 'time-span of a production': a person asks when X was made"),
  (r"^What is the time-span of a production that is carried out by .*\?$", 1, "CIDOC 'time-span of a production': a person asks when X made works"),
 ],
 "libris-sab": [
  ('^Which subdivision is an element of [^?]*\\?$', 2, ''),
  ('^Which temporal subdivision is an element of a classification that has the narrower concept .*\\?$', 1, 'long: through a classification and its narrower concept'),
  (r"^In which term collection is .*\?$", 2, "Swedish labels in an English frame, natural otherwise"),
  (r"^How many .* are elements of .*\?$", 2, ""),
  (r"^Which (classification|subdivision) has the narrower concept [^?]*\?$", 2, ""),
  (r"^Which (classification|subdivision) has a narrower concept that has the narrower concept .*\?$", 1, "two hops of 'narrower concept': understandable, awkward"),
  (r"^Which classification has a (broader|narrower) concept that is in the collection .*\?$", 1, "'has a broader concept that is in the collection': awkward"),
  (r"^Which classification is in the collection .*\?$", 2, ""),
  (r"^Which classification has the element .*\?$", 1, "'has the element' reads oddly"),
  (r"^Which content (form|genre) subdivision is an element of .*\?$", 2, ""),
  (r"^What are the elements of a classification that .*\?$", 1, "long"),
  (r"^What are the elements of [^?]*\?$", 2, ""),
  (r"^Which classification has the broader concept .*\?$", 2, ""),
  (r"^How many subdivisions have a broader concept that has the element .*\?$", 1, "long"),
 ],
 "ammo-occupations": [
  (r"^Which \w+( \w+)?'s hisco code has a hiscam of [\d.]+\?$", 1, "a lookup by a statistic (the code's hiscam)"),
  (r"^Which \w+( \w+)?'s hisco code has (the (smallest|largest) hiscam|a hiscam (greater than|less than|of at least|of at most) [\d.]+)\?$", 2,
   "'Which title's hisco code has the smallest hiscam?': a specialist's question, the two hops said as a person says them"),
  (r"^Which \w+( \w+)?'s hisco code has the broader concept .*\?$", 2,
   "the possessive says the two hops; 'has the broader concept X' as in libris-sab's 'Which classification has the broader concept X?'"),
  (r"^What is the (smallest|largest) hiscam of any hisco code\?$", 2, "whose value is ranked is said (the HISCO codes); a specialist's question"),
  ('^How many titles have a hisco code that has the broader concept .*\\?$', 1, 'two hops through the HISCO hierarchy: awkward'),
  (r"hisco code for Not an occupational title\?$", 1, "the category's label is a sentence ('Not an occupational title')"),
  (r"^(Which|How many) \w+( \w+)? (has|have) the hisco code for .*\?$", 2, "'the HISCO code for <category>': a specialist's question, clear"),
  (r"^What is the (smallest|largest) hiscam\?$", 1, "'hiscam' (a status score) is unexplained; of which occupations is not said"),
  (r"hisco code that has (a|the (smallest|largest)) hiscam", 1, "'a hisco code that has a hiscam of': jargon, two hops"),
  (r"(has|have) the same hisco code as .*\?$", 2, ""),
  (r"has the same coo1980 code as .*\?$", 1, "'coo1980 code' is an opaque code name"),
  (r"has the same hisco product as .*\?$", 1, "'hisco product' is jargon"),
  (r"has a hisco code that has the broader concept .*\?$", 1, "two hops through the HISCO hierarchy: awkward"),
 ],
 "organs-it": [
  ('^Which organ has a start time (of at most|of at least|greater than|less than) \\d+\\?$', 1, "'a start time': the start of what (its stay at its location) is not said"),
  ('^Which organ has the (smallest|largest) start time\\?$', 1, "'start time': the start of what is not said"),
  ('^Which organ has the (largest|smallest) (longitude|latitude)\\?$', 1, "'the largest longitude' (the easternmost): understandable, odd"),
  ('^How many instrument wholes are in the city [^?]*\\?$', 1, "'instrument wholes' is the KG's class name: a person says organs"),
  (r"^Which organ is in the city [^?]*\?$", 2, "what a person asks (the instrument whole and the blank-node address are the KG's structure)"),
  (r"^Which organ is at the location [^?]*\?$", 2, "'at the location <church>': natural"),
  (r"^Which organ has the full address [^?]*\?$", 2, ""),
  (r"^Which organ has a start time of \d+\?$", 1, "'a start time of 1997': the start of what (its stay at its location) is not said"),
  (r"^Which organ has a time of \d+\?$", 1, "'a time of 1997' is vague (the KG's time interval)"),
  (r"^How many instrument wholes have a (time|start time|end time) of \d+\?$", 1, "'a time of 2010' is vague (the KG's time interval), 'instrument wholes' the KG's class"),
  (r"^How many instrument wholes have the (city|location name|full address) .*\?$", 1, "'instrument wholes' is the KG's class name: a person says organs"),
  (r"^Which organ includes an instrument whole that has (a latitude|a longitude) of .*\?$", 1, "a lookup by a coordinate; 'includes an instrument whole' is the KG's modelling"),
  (r"^Which organ includes an instrument whole that has the (city|location name|full address) [^?]* and that has the .*\?$", 1, "long: two conditions on the instrument"),
  (r"^Which organ includes an instrument whole that has the (city|location name|full address) .*\?$", 1, "clear, but a person asks 'Which organ is in X?', not through 'an instrument whole'"),
  (r"^What is the (smallest|largest) (latitude|longitude|start time|end time|time) of any instrument whole\?$", 1, "'of any instrument whole': the KG's class name"),
  (r"^Which organ includes an instrument whole that has .*\?$", 1, "through 'an instrument whole'; awkward"),
 ],
 "gocam-nod2": [
  (r"^What is the (latest|earliest) (date|creation date)\?$", 1, "'the latest date' of what? (the KG names nothing it is about)"),
  (r"^How many things .*\?$", 1, "'things': the counted individuals have no names or classes with words (GO-CAM ids)"),
 ],
 "fso-hgde": [
  (r"^Which commune is valid from \S+ until \S+\?$", 2, "'valid from X until Y': as a person writes the range"),
  (r"^How many communes are valid from \S+ until \S+\?$", 2, "'valid from X until Y': as a person writes the range"),
  (r"^Which (code list|concept scheme|commune) (became valid|stopped being valid) (latest|earliest)\?$", 2, ""),
  (r"^Which (code list|concept scheme|commune) (became valid|stopped being valid) (after|before|on or after|on or before) [^ ]*\?$", 2, ""),
  (r"^Which commune is valid until \S+ and is valid from \S+\?$", 1, "'is valid until Y and is valid from X': a person writes 'valid from X until Y'"),
  (r"^How many classification levels have a member that is valid from \S+\?$", 1, "SDMX 'classification levels' with 'a member': clear, awkward"),
  (r"^Which commune that is valid from \S+ stopped being valid (latest|earliest)\?$", 1, "a superlative among the communes valid from a date: understandable, awkward"),
  (r"^Which (code list|concept scheme|commune) is valid until [^ ]*\?$", 2, ""),
  (r"^How many communes are valid until [^ ]*\?$", 2, ""),
  (r"^How many communes are valid from \S+ and are valid until \S+\?$", 1, "'are valid from X and are valid until Y': a person writes 'valid from X until Y'"),
  (r"^Which collection has the same member as .*\?$", 1, "'the same member as Hierarchy': awkward, what is shared is not said"),
  (r"^How many communes are in the scheme .*\?$", 2, ""),
  (r"^How many concept roles are in the scheme .*\?$", 1, "SDMX 'concept role' and a scheme named 'concepts scheme'"),
  (r"^What is the measure of .*\?$", 1, "SDMX 'measure' of a data structure named by a code"),
  (r"^What is the (smallest|largest) order of any data structure definition\?$", 0, "the order of a component (a blank node the text skips): says nothing to a reader"),
  (r"^Which data structure definition has an order of \d+\?$", 0, "'has an order of 8': the order is a component's (a blank node the text skips); vague"),
  (r"^Which data structure definition has the measure .*\?$", 1, "SDMX jargon"),
  (r"^Which (code list|concept scheme|commune) is valid to .*\?$", 1, "'valid to' a date (a person says 'valid until')"),
  (r"^How many communes are valid to .*\?$", 1, "'valid to' a date (a person says 'valid until')"),
  (r"^In which (code list|concept scheme) is .*\?$", 2, ""),
  (r"^Which collection refers to .*\?$", 2, ""),
  (r"^Which (concept|time) role is in the scheme .*\?$", 1, "SDMX 'concept role' and a scheme named 'concepts scheme'"),
  (r"^Which (code list|concept scheme|commune) is valid from .*\?$", 2, ""),
  (r"^How many communes are valid from .*\?$", 2, ""),
  (r"^Which (code list|concept scheme) does .{0,30} refer to\?$", 2, ""),
  (r"^Which (code list|concept scheme) does .* refer to\?$", 1, "long label as topic"),
  (r"^What are the members of .{0,20}\?$", 2, ""),
  (r"^What are the members of .*\?$", 1, "long label; the answer ('Hierarchy') says little"),
 ],
 "iaml-genres": [
  (r"^Which concept scheme was (created|modified) on .*\?$", 2, ""),
 ],
}

def score(kg, q):
    for pat, s, why in RULES.get(kg, []):
        if re.search(pat, q):
            return s, why
    return None

if __name__ == "__main__":
    t = open(sys.argv[1]).read()
    out, missing = {}, []
    for sec in t.split('\n## ')[1:]:
        lines = sec.split('\n'); kg = lines[0].strip()
        rows = [l.split(' | ') for l in lines if l.startswith('| ') and not l.startswith('| #')]
        got = []
        for c in rows:
            if len(c) < 5: continue
            r = score(kg, c[1])
            if r is None:
                missing.append((kg, c[0][2:], c[1], c[3][:80])); r = ("", "UNSCORED")
            got.append(list(r))
        out[kg] = got
    json.dump(out, open(sys.argv[2], 'w'), ensure_ascii=False, indent=0)
    for m in missing: print(*m, sep=' | ')
    for kg, g in out.items():
        sc = [x[0] for x in g if x[0] != ""]
        print(kg, len(g), round(sum(sc)/len(sc), 3) if sc else None, [sc.count(2), sc.count(1), sc.count(0)])
