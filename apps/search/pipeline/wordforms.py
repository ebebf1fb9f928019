"""Word forms the english stemmer does not join: irregular verbs ("bought" / "buy") and a few
nouns and verbs whose stems differ ("injured" / "injury", "married" / "marriage"). The keyword
strategy also matches a query word's other forms, so a question asked in one form finds the
turn that said it in another. A fixed list: no download, no model at run time.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Each line: forms of one word, any of which stands for the others. The commonest verbs (be,
# get, go, make, say, see, take, ...) are left out: their forms are in every other turn, and
# matching them too moved noise above the evidence on locomo-dev.
GROUPS = """
bite bit bitten
blow blew blown
break broke broken
bring brought
build built
buy bought
catch caught
choose chose chosen
dig dug
draw drew drawn
drink drank drunk
drive drove driven
eat ate eaten
fall fell fallen
feed fed
fight fought
fly flew flown
forget forgot forgotten
freeze froze frozen
grow grew grown
hang hung
hide hid hidden
hold held
lend lent
lose lost
meet met
pay paid
ride rode ridden
ring rang rung
rise rose risen
sell sold
send sent
shake shook shaken
shoot shot
sing sang sung
sink sank sunk
sleep slept
speak spoke spoken
spend spent
steal stole stolen
stick stuck
strike struck
swim swam swum
teach taught
tear tore torn
throw threw thrown
wake woke woken
wear wore worn
weep wept
win won
write wrote written
injure injured injury injuries
marry married marriage
die died death dead
born birth
lose lost loss
succeed success successful
decide decision
adopt adoption adopted
apply application
compete competition competitive
perform performance
inspire inspiration inspired
volunteer volunteering volunteered
grandmother grandma
grandfather grandpa
mother mom mum
father dad
children child kids kid
""".strip()

_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=1)
def _forms() -> dict[str, tuple[str, ...]]:
    forms: dict[str, set[str]] = {}
    for line in GROUPS.splitlines():
        words = line.split()
        for word in words:
            forms.setdefault(word, set()).update(w for w in words if w != word)
    return {word: tuple(sorted(others)) for word, others in forms.items()}


def other_forms(text: str) -> str:
    """The other forms of the text's words that the list knows, as one text ("" if none)."""
    forms = _forms()
    seen = set(_WORD.findall(text.lower()))
    extra = dict.fromkeys(f for w in seen for f in forms.get(w, ()) if f not in seen)
    return " ".join(extra)
