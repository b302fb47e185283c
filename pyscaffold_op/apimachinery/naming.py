"""Resource plural and singular names, computed the way kubebuilder does (flect on the lower-cased kind)."""

_IRREGULAR = {
    "person": "people",
    "man": "men",
    "woman": "women",
    "child": "children",
    "foot": "feet",
    "tooth": "teeth",
    "goose": "geese",
    "mouse": "mice",
    "ox": "oxen",
    "index": "indices",
    "matrix": "matrices",
    "vertex": "vertices",
    "analysis": "analyses",
    "basis": "bases",
    "crisis": "crises",
    "datum": "data",
    "medium": "media",
    "criterion": "criteria",
    "phenomenon": "phenomena",
    "quiz": "quizzes",
    "leaf": "leaves",
    "knife": "knives",
    "life": "lives",
    "wife": "wives",
    "half": "halves",
    "wolf": "wolves",
    "shelf": "shelves",
    "thief": "thieves",
    "potato": "potatoes",
    "tomato": "tomatoes",
    "hero": "heroes",
    "echo": "echoes",
    "proxy": "proxies",
    "policy": "policies",
}
_UNCOUNTABLE = {
    "equipment",
    "information",
    "rice",
    "money",
    "species",
    "series",
    "fish",
    "sheep",
    "deer",
    "news",
    "metadata",
    "data",
    "endpoints",
    "status",
}


def pluralize(kind: str) -> str:
    """Plural resource name for a kind: `At` -> `ats`, `Policy` -> `policies`, `Ingress` -> `ingresses`."""
    word = kind.lower()
    if word in _UNCOUNTABLE:
        return word
    # Irregulars match whole words only: "box" is not "b" + "ox", so it is "boxes", not "boxen".
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def singularize(kind: str) -> str:
    """Singular resource name: the lower-cased kind, as the API server's discovery reports it."""
    return kind.lower()
