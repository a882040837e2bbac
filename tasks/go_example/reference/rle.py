"""Run-length encoding: "aaab" <-> "3a1b"."""


def encode(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append(f"{j - i}{text[i]}")
        i = j
    return "".join(out)


def decode(text: str) -> str:
    out, count = [], ""
    for ch in text:
        if ch.isdigit():
            count += ch
        else:
            if not count:
                raise ValueError(f"missing count before {ch!r}")
            out.append(ch * int(count))
            count = ""
    if count:
        raise ValueError("trailing count")
    return "".join(out)
