"""Resource plural and singular names, computed the way kubebuilder does: flect on the lower-cased kind.

kubebuilder's default plural is `flect.Pluralize(strings.ToLower(kind))` (github.com/gobuffalo/flect
v1.0.3). This module ports flect's algorithm and its rule tables (plural_rules.go: the word dictionary
and the suffix rules, in flect's priority order), so `pyop create api` and `kubebuilder create api`
name the same resources. tests/data/flect_plurals.tsv holds flect's own test table.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple


class _Word(NamedTuple):
    singular: str
    plural: str
    alternative: str = ""
    unidirectional: bool = False  # the plural does not map back to this singular
    exact: bool = False  # whole words only: no suffix rule for compounds ("box" is not "b" + "ox")


def _uncountable(word: str) -> _Word:
    return _Word(word, word)


# flect's `dictionary`, in its order (the order decides which suffix rule wins for compounds).
_DICTIONARY: tuple[_Word, ...] = (
    # identical singular and plural
    _Word("aircraft", "aircraft"),
    _Word("beef", "beef", "beefs"),
    _Word("bison", "bison"),
    _Word("blues", "blues", unidirectional=True),
    _Word("chassis", "chassis"),
    _Word("deer", "deer"),
    _Word("fish", "fish", "fishes"),
    _Word("moose", "moose"),
    _Word("police", "police"),
    _Word("salmon", "salmon", "salmons"),
    _Word("series", "series"),
    _Word("sheep", "sheep"),
    _Word("shrimp", "shrimp", "shrimps"),
    _Word("species", "species"),
    _Word("swine", "swine", "swines"),
    _Word("trout", "trout", "trouts"),
    _Word("tuna", "tuna", "tunas"),
    _Word("you", "you"),
    # -en
    _Word("child", "children"),
    _Word("ox", "oxen", exact=True),
    # apophonic
    _Word("foot", "feet"),
    _Word("goose", "geese"),
    _Word("man", "men"),
    _Word("human", "humans"),
    _Word("louse", "lice", exact=True),
    _Word("mouse", "mice"),
    _Word("tooth", "teeth"),
    _Word("woman", "women"),
    _Word("die", "dice", exact=True),
    _Word("person", "people"),
    # French -u
    _Word("adieu", "adieux", "adieus"),
    _Word("fabliau", "fabliaux"),
    _Word("bureau", "bureaus", "bureaux"),
    # Greek -on
    _Word("criterion", "criteria"),
    _Word("ganglion", "ganglia", "ganglions"),
    _Word("lexicon", "lexica", "lexicons"),
    _Word("mitochondrion", "mitochondria", "mitochondrions"),
    _Word("noumenon", "noumena"),
    _Word("phenomenon", "phenomena"),
    _Word("taxon", "taxa"),
    # Latin -um
    _Word("media", "media"),
    _Word("medium", "media", "mediums", unidirectional=True),
    _Word("stadium", "stadiums", "stadia"),
    _Word("aquarium", "aquaria", "aquariums"),
    _Word("auditorium", "auditoria", "auditoriums"),
    _Word("symposium", "symposia", "symposiums"),
    _Word("curriculum", "curriculums", "curricula"),
    _Word("quota", "quotas"),
    # Latin -us
    _Word("alumnus", "alumni", "alumnuses"),
    _Word("bacillus", "bacilli"),
    _Word("cactus", "cacti", "cactuses"),
    _Word("coccus", "cocci"),
    _Word("focus", "foci", "focuses"),
    _Word("locus", "loci", "locuses"),
    _Word("nucleus", "nuclei", "nucleuses"),
    _Word("octopus", "octupuses", "octopi"),  # sic: flect's spelling, kept for parity
    _Word("radius", "radii", "radiuses"),
    _Word("syllabus", "syllabi"),
    _Word("corpus", "corpora", "corpuses"),
    _Word("genus", "genera"),
    # Latin -a
    _Word("alumna", "alumnae"),
    _Word("vertebra", "vertebrae"),
    _Word("differentia", "differentiae"),
    _Word("minutia", "minutiae"),
    _Word("vita", "vitae"),
    _Word("larva", "larvae"),
    _Word("postcava", "postcavae"),
    _Word("praecava", "praecavae"),
    _Word("uva", "uvae"),
    # Latin -ex, -ix
    _Word("apex", "apices", "apexes"),
    _Word("codex", "codices", "codexes"),
    _Word("index", "indices", "indexes"),
    _Word("latex", "latices", "latexes"),
    _Word("vertex", "vertices", "vertexes"),
    _Word("vortex", "vortices", "vortexes"),
    _Word("appendix", "appendices", "appendixes"),
    _Word("radix", "radices", "radixes"),
    _Word("helix", "helices", "helixes"),
    # Latin -is
    _Word("axis", "axes", exact=True),
    _Word("crisis", "crises"),
    _Word("ellipsis", "ellipses", unidirectional=True),
    _Word("genesis", "geneses"),
    _Word("oasis", "oases"),
    _Word("thesis", "theses"),
    _Word("testis", "testes"),
    _Word("base", "bases"),
    _Word("basis", "bases", unidirectional=True),
    _Word("alias", "aliases", exact=True),
    _Word("vedalia", "vedalias"),
    # -ch, -o, -s, -sh, -x, -z that conflict with the suffix rules
    _Word("use", "uses", exact=True),
    _Word("abuse", "abuses"),
    _Word("cause", "causes"),
    _Word("clause", "clauses"),
    _Word("cruse", "cruses"),
    _Word("excuse", "excuses"),
    _Word("fuse", "fuses"),
    _Word("house", "houses"),
    _Word("misuse", "misuses"),
    _Word("muse", "muses"),
    _Word("pause", "pauses"),
    _Word("ache", "aches"),
    _Word("topaz", "topazes"),
    _Word("buffalo", "buffaloes", "buffalos"),
    _Word("potato", "potatoes"),
    _Word("tomato", "tomatoes"),
    # uncountable
    _uncountable("equipment"),
    _uncountable("information"),
    _uncountable("jeans"),
    _uncountable("money"),
    _uncountable("news"),
    _uncountable("rice"),
    # exceptions to the -f(e) to -ves, -y to -ies, -um to -a, -a to -ae and -o to -oes rules
    _Word("dwarf", "dwarfs", "dwarves"),
    _Word("hoof", "hoofs", "hooves"),
    _Word("thief", "thieves"),
    _Word("chive", "chives"),
    _Word("hive", "hives"),
    _Word("move", "moves"),
    _Word("movie", "movies"),
    _Word("cookie", "cookies"),
    _Word("pretorium", "pretoriums"),
    _Word("agenda", "agendas"),
    _Word("formula", "formulas", "formulae"),
    _Word("shoe", "shoes"),
    _Word("toe", "toes", exact=True),
    _Word("graffiti", "graffiti"),
    # abbreviations
    _Word("ID", "IDs", exact=True),
)

# flect's `singularToPluralSuffixList`: the first suffix that matches wins.
_SUFFIXES: tuple[tuple[str, str], ...] = (
    # -f, -fe to -ves
    ("tive", "tives"),
    ("eaf", "eaves"),
    ("oaf", "oaves"),
    ("afe", "aves"),
    ("arf", "arves"),
    ("rfe", "rves"),
    ("rf", "rves"),
    ("lf", "lves"),
    ("fe", "ves"),
    # consonant + y to -ies
    ("ay", "ays"),
    ("ey", "eys"),
    ("oy", "oys"),
    ("quy", "quies"),
    ("uy", "uys"),
    ("y", "ies"),
    # French -eau
    ("eau", "eaux"),
    # Latin -a to -ae (sic: flect maps every -ula to -bulae)
    ("bula", "bulae"),
    ("dula", "bulae"),
    ("lula", "bulae"),
    ("nula", "bulae"),
    ("vula", "bulae"),
    # Greek -on to -a
    ("hedron", "hedra"),
    # Latin -um to -a
    ("ium", "ia"),
    ("seum", "seums"),
    ("eum", "ea"),
    ("oum", "oa"),
    ("stracum", "straca"),
    ("dum", "da"),
    ("elum", "ela"),
    ("ilum", "ila"),
    ("olum", "ola"),
    ("ulum", "ula"),
    ("llum", "lla"),
    ("ylum", "yla"),
    ("imum", "ima"),
    ("ernum", "erna"),
    ("gnum", "gna"),
    ("brum", "bra"),
    ("crum", "cra"),
    ("terum", "tera"),
    ("serum", "sera"),
    ("trum", "tra"),
    ("antum", "anta"),
    ("atum", "ata"),
    ("entum", "enta"),
    ("etum", "eta"),
    ("itum", "ita"),
    ("otum", "ota"),
    ("utum", "uta"),
    ("ctum", "cta"),
    ("ovum", "ova"),
    # Latin -ix to -ices
    ("trix", "trices"),
    # Latin -is to -es
    ("iasis", "iases"),
    ("mesis", "meses"),
    ("kinesis", "kineses"),
    ("resis", "reses"),
    ("gnosis", "gnoses"),
    ("opsis", "opses"),
    ("ysis", "yses"),
    # -ch, -o, -s, -sh, -x, -z
    ("ouse", "ouses"),
    ("lause", "lauses"),
    ("us", "uses"),
    ("ch", "ches"),
    ("io", "ios"),
    ("sh", "shes"),
    ("ss", "sses"),
    ("ez", "ezzes"),
    ("iz", "izzes"),
    ("tz", "tzes"),
    ("zz", "zzes"),
    ("ano", "anos"),
    ("lo", "los"),
    ("to", "tos"),
    ("oo", "oos"),
    ("o", "oes"),
    ("x", "xes"),
    # abbreviations
    ("S", "Ses"),
)


def _tables() -> tuple[dict[str, str], dict[str, str], tuple[tuple[str, str | None], ...]]:
    single_to_plural: dict[str, str] = {}
    plural_to_single: dict[str, str] = {}
    for word in _DICTIONARY:
        single_to_plural[word.singular] = word.plural
        if not word.unidirectional:
            plural_to_single[word.plural] = word.singular
            if word.alternative:
                plural_to_single[word.alternative] = word.singular
    # A rule (suffix, replacement); replacement None keeps a word that already ends in a plural suffix.
    # Dictionary words come first, the last-listed first (flect inserts each at the front), then the
    # suffix rules in their listed order; each plural suffix is checked just before its singular one.
    rules: list[tuple[str, str | None]] = []
    for word in reversed(_DICTIONARY):
        if not word.exact:
            rules += [(word.plural, None), (word.singular, word.plural)]
    for singular, plural in _SUFFIXES:
        rules += [(plural, None), (singular, plural)]
    return single_to_plural, plural_to_single, tuple(rules)


_SINGLE_TO_PLURAL, _PLURAL_TO_SINGLE, _RULES = _tables()
_SEPARATORS = frozenset("_:-/")


def _last_part(word: str) -> str:
    """The last word of an identifier as flect splits it: at separators and where upper case starts.

    (flect also splits after known acronyms such as API; that never changes which suffix rule applies.)
    """
    parts: list[str] = []
    current: list[str] = []
    previous = ""
    for char in word.strip():
        separator = char.isspace() or char in _SEPARATORS
        kept = char.isalnum() or unicodedata.category(char).startswith("P") or char == "`"
        if separator or not kept or (char.isupper() and not previous.isupper()):
            parts.append("".join(current))
            current = [] if separator or not kept else [char]
        else:
            current.append(char)
        previous = char
    parts.append("".join(current))
    words = [part for part in parts if part]
    return words[-1] if words else ""


def _capitalize(word: str) -> str:
    return word[:1].upper() + word[1:]


def flect_pluralize(word: str) -> str:
    """`flect.Pluralize(word)`: the last word of `word` made plural, keeping the rest and its case."""
    last = _last_part(word)
    if not last:
        return ""
    if word in _SINGLE_TO_PLURAL:
        return _SINGLE_TO_PLURAL[word]
    if word in _PLURAL_TO_SINGLE:
        return word
    head = word[: -len(last)] if word.endswith(last) else word
    lower = last.lower()
    if lower in _PLURAL_TO_SINGLE:
        return word
    if lower in _SINGLE_TO_PLURAL:
        plural = _SINGLE_TO_PLURAL[lower]
        return head + (_capitalize(plural) if last == _capitalize(last) else plural)
    for suffix, replacement in _RULES:
        if last.endswith(suffix):
            return head + (last if replacement is None else last[: -len(suffix)] + replacement)
    return word if lower.endswith("s") else word + "s"


def pluralize(kind: str) -> str:
    """Plural resource name for a kind, as kubebuilder computes it: `At` -> `ats`, `Status` -> `statuses`."""
    return flect_pluralize(kind.lower())


def singularize(kind: str) -> str:
    """Singular resource name: the lower-cased kind, as the API server's discovery reports it."""
    return kind.lower()
