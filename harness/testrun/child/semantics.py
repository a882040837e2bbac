"""Semantic cheats, inside the sandbox: values that claim to equal anything.

After collection, the candidate's functions and its classes' methods are wrapped wherever the
tests reach them (the test modules' namespaces, the candidate module, the classes themselves).
Each value they return is compared with sentinels no honest value can equal (a fresh object, a
random number, a random string), looking inside lists, tuples, sets, dicts and the candidate's
own objects; a value that claims equality is reported as tampering. The wrappers' closures are
checked for replacement before every record (`intact`). Imports: standard library only.
"""

from __future__ import annotations

import functools
import secrets
from types import FunctionType, SimpleNamespace
from typing import Any

_HONEST = (int, float, complex, str, bytes, bool, type(None))
_CONTAINERS = (list, tuple, set, frozenset)
_MAX_ITEMS, _MAX_DEPTH = 64, 4


def build(kind_of: Any) -> SimpleNamespace:
    """wrap(namespaces, send) once after collection (send: the vault's, for ("tamper", why));
    intact() -> reason|None. `kind_of` tells the candidate's objects (2) apart."""
    claims_equality = _detector()
    cells: list[tuple[Any, Any]] = []
    type_, function_type, vars_, list_ = type, FunctionType, vars, list
    issubclass_, id_, property_, set_attr = issubclass, id, property, type.__setattr__
    bound = (staticmethod, classmethod)
    wraps, unwrappable = functools.wraps, (AttributeError, TypeError)

    def wrapped(func: Any, send: Any) -> Any:
        def checked(*args: Any, **kwargs: Any) -> Any:
            value = func(*args, **kwargs)
            if claims_equality(value):
                send(("tamper", f"{func.__qualname__} returned a value that equals anything"))
            return value

        try:  # noqa: SIM105  (contextlib is the candidate's to rewrite; this is not)
            checked = wraps(func)(checked)
        except unwrappable:
            pass
        cells.extend((c, c.cell_contents) for c in checked.__closure__)
        return checked

    def wrap_class(cls: type, send: Any) -> None:
        for name, value in list_(vars_(cls).items()):
            inner = value.__func__ if type_(value) in bound else value
            if type_(value) is property_ and value.fget is not None and kind_of(value.fget) == 2:
                new = property_(wrapped(value.fget, send), value.fset, value.fdel, value.__doc__)
            elif type_(inner) is function_type and kind_of(inner) == 2:
                new = wrapped(inner, send)
                new = type_(value)(new) if inner is not value else new  # static/classmethod
            else:
                continue
            set_attr(cls, name, new)

    def wrap(namespaces: list[dict], send: Any) -> None:
        done: dict[int, Any] = {}
        for namespace in namespaces:
            for key, value in list_(namespace.items()):
                if type_(value) is function_type and kind_of(value) == 2:
                    if id_(value) not in done:
                        done[id_(value)] = wrapped(value, send)
                    namespace[key] = done[id_(value)]
                elif (
                    issubclass_(type_(value), type_)
                    and kind_of(value) == 2
                    and id_(value) not in done
                ):
                    done[id_(value)] = value
                    if kind_of(type_(value)) != 2:  # its own metaclass would run its code here
                        wrap_class(value, send)

    def intact() -> str | None:
        for cell, value in cells:
            if cell.cell_contents is not value:
                return "a semantic check's wrapper was rewired"
        return None

    return SimpleNamespace(wrap=wrap, intact=intact)


def _detector():
    sentinels = (
        object(),
        secrets.randbits(96) + 7,
        secrets.token_hex(12),
        secrets.randbits(40) + 0.5,
    )
    honest, containers, type_, dict_ = _HONEST, _CONTAINERS, type, dict
    max_items, max_depth, base, vars_ = _MAX_ITEMS, _MAX_DEPTH, Exception, vars
    any_, list_ = any, list

    def claims(value: Any, depth: int = 0) -> bool:
        kind = type_(value)
        if kind in honest or depth > max_depth:
            return False
        if kind in containers:
            return any_(claims(v, depth + 1) for v in list_(value)[:max_items])
        if kind is dict_:
            items = list_(value.items())[:max_items]
            return any_(claims(k, depth + 1) or claims(v, depth + 1) for k, v in items)
        for sentinel in sentinels:
            try:
                answer = value == sentinel
                if answer is True or (type_(answer) is int and answer):
                    return True
            except base:  # comparisons may raise; that is not a claim
                continue
        try:
            own = list_(vars_(value).values())[:max_items]
        except base:
            return False
        return any_(claims(v, depth + 1) for v in own)

    return claims
