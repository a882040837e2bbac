"""Roman numerals, 1 to 3999."""

_VALUES = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]


def to_roman(number: int) -> str:
    if not 0 < number < 4000:
        raise ValueError(f"{number} is out of range (1 to 3999)")
    out = []
    for value, letters in _VALUES:
        while number >= value:
            out.append(letters)
            number -= value
    return "".join(out)


def from_roman(text: str) -> int:
    total, i = 0, 0
    for value, letters in _VALUES:
        while text.startswith(letters, i):
            total += value
            i += len(letters)
    if i != len(text) or not text or to_roman(total) != text:
        raise ValueError(f"{text!r} is not a canonical roman numeral")
    return total
