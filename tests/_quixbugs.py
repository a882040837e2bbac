"""A QuixBugs-shaped task on disk: a conftest that skips slow-marked tests unless `--runslow`."""

from __future__ import annotations

import textwrap
from pathlib import Path

# QuixBugs' own conftest.py, cut to what matters here: the option and the skip it drives.
CONFTEST = """\
import pytest


def pytest_addoption(parser):
    parser.addoption("--correct", action="store_true")
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_configure(config):
    pytest.use_correct = config.getoption("correct")
    config.addinivalue_line("markers", "slow: mark test as slow to run")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="need --runslow option to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
"""

TESTS = """\
import pytest

from knapsack import knapsack

CASES = [
    (100, [(60, 10), (50, 8), (20, 4), (20, 4), (8, 3), (3, 2)], 19),
    (40, [(30, 10), (50, 5), (10, 20), (40, 25)], 30),
    (750, [(70, 135), (73, 139), (77, 149), (80, 150), (82, 156)], 729),
]


@pytest.mark.parametrize("capacity,items,expected", CASES)
def test_knapsack(capacity, items, expected):
    assert knapsack(capacity, items) == expected


@pytest.mark.slow
def test_knapsack_big():
    items = [(w, w + 3) for w in range(1, 400)]
    assert knapsack(6404180, items) == sum(v for _, v in items)
"""

CORRECT = """\
def knapsack(capacity, items):
    best = [0] * (capacity + 1)
    for weight, value in items:
        for room in range(capacity, weight - 1, -1):
            best[room] = max(best[room], best[room - weight] + value)
    return best[capacity]
"""

BUGGY = CORRECT.replace("range(capacity, weight - 1, -1)", "range(capacity, weight, -1)")

TASKS = """\
tasks:
  - id: knapsack
    reference: python_programs/knapsack.py
    tests: python_testcases/test_knapsack.py
    support: conftest.py
    output: fixed/knapsack.py
    solution: correct_python_programs/knapsack.py
    max_attempts: 2
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def quixbugs(base: Path, tests: str = TESTS) -> Path:
    """The repository's layout in `base`; returns the task list."""
    write(base / "conftest.py", CONFTEST)
    write(base / "python_programs" / "knapsack.py", BUGGY)
    write(base / "correct_python_programs" / "knapsack.py", CORRECT)
    write(base / "python_testcases" / "test_knapsack.py", tests)
    return write(base / "tasks.yaml", TASKS)


# The suite's support module, as QuixBugs ships one: graph and list programs take its nodes.
NODE = """\
class Node:
    def __init__(self, value=None, successor=None, successors=None, predecessors=None,
                 incoming_nodes=None, outgoing_nodes=None):
        self.value = value
        self.successor = successor
        self.successors = successors or []
        self.predecessors = predecessors or []
        self.incoming_nodes = incoming_nodes or []
        self.outgoing_nodes = outgoing_nodes or []
"""

# Correct programs in the suite's shape, written for these tests: names that shadow the support
# module (`node`), attributes set on the nodes handed in, stdlib imports under their own names.
PROGRAMS = {
    "knapsack": CORRECT,
    "reverse_linked_list": """\
def reverse_linked_list(node):
    prevnode = None
    while node:
        nextnode = node.successor
        node.successor = prevnode
        prevnode = node
        node = nextnode
    return prevnode
""",
    "detect_cycle": """\
def detect_cycle(node):
    hare = tortoise = node
    while True:
        if hare is None or hare.successor is None:
            return False
        tortoise = tortoise.successor
        hare = hare.successor.successor
        if hare is tortoise:
            return True
""",
    "depth_first_search": """\
def depth_first_search(startnode, goalnode):
    nodesvisited = set()

    def search_from(node):
        if node in nodesvisited:
            return False
        if node is goalnode:
            return True
        nodesvisited.add(node)
        return any(search_from(nextnode) for nextnode in node.successors)

    return search_from(startnode)
""",
    "breadth_first_search": """\
from collections import deque as Queue


def breadth_first_search(startnode, goalnode):
    queue = Queue()
    queue.append(startnode)
    nodesseen = {startnode}
    while queue:
        node = queue.popleft()
        if node is goalnode:
            return True
        for successor in node.successors:
            if successor not in nodesseen:
                nodesseen.add(successor)
                queue.append(successor)
    return False
""",
    "topological_ordering": """\
def topological_ordering(nodes):
    ordered_nodes = [node for node in nodes if not node.incoming_nodes]
    for node in ordered_nodes:
        for nextnode in node.outgoing_nodes:
            ready = set(ordered_nodes).issuperset(nextnode.incoming_nodes)
            if ready and nextnode not in ordered_nodes:
                ordered_nodes.append(nextnode)
    return ordered_nodes
""",
    "relink_predecessors": """\
import node


def relink_predecessors(nodes):
    for node in nodes:
        for successor in node.successors:
            successor.predecessors = [*successor.predecessors, node]
    return nodes
""",
    "shortest_path_lengths": """\
from collections import defaultdict


def shortest_path_lengths(n, length_by_edge):
    length_by_path = defaultdict(lambda: float("inf"))
    length_by_path.update({(i, i): 0 for i in range(n)})
    length_by_path.update(length_by_edge)
    for k in range(n):
        for i in range(n):
            for j in range(n):
                length_by_path[i, j] = min(
                    length_by_path[i, j], length_by_path[i, k] + length_by_path[k, j]
                )
    return length_by_path
""",
    "minimum_spanning_tree": """\
def minimum_spanning_tree(weight_by_edge):
    group_by_node = {}
    mst_edges = set()
    for edge in sorted(weight_by_edge, key=weight_by_edge.__getitem__):
        u, v = edge
        if group_by_node.setdefault(u, {u}) != group_by_node.setdefault(v, {v}):
            mst_edges.add(edge)
            group_by_node[u].update(group_by_node[v])
            for node in group_by_node[v]:
                group_by_node[node] = group_by_node[u]
    return mst_edges
""",
    "shortest_path_length": """\
from heapq import heappop, heappush


def shortest_path_length(length_by_edge, startnode, goalnode):
    unvisited = [(0, id(startnode), startnode)]
    visited = set()
    while unvisited:
        distance, _, node = heappop(unvisited)
        if node is goalnode:
            return distance
        if node in visited:
            continue
        visited.add(node)
        for nextnode in node.successors:
            if nextnode not in visited:
                step = length_by_edge[node, nextnode]
                heappush(unvisited, (distance + step, id(nextnode), nextnode))
    return float("inf")
""",
    "gcd": """\
def gcd(a, b):
    while b:
        a, b = b, a % b
    return a
""",
    "sqrt": """\
def sqrt(x, epsilon):
    approx = x / 2
    while abs(x - approx ** 2) > epsilon:
        approx = 0.5 * (approx + x / approx)
    return approx
""",
    "wrap": """\
def wrap(text, cols):
    lines = []
    while len(text) > cols:
        end = text.rfind(" ", 0, cols + 1)
        if end == -1:
            end = cols
        line, text = text[:end], text[end:]
        lines.append(line)
    lines.append(text)
    return lines
""",
    "to_base": """\
import string


def to_base(num, b):
    result = ""
    alphabet = string.digits + string.ascii_uppercase
    while num > 0:
        i = num % b
        num = num // b
        result = alphabet[i] + result
    return result
""",
    "rpn_eval": """\
import operator


def rpn_eval(tokens):
    def op(symbol, a, b):
        return {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}[
            symbol
        ](a, b)

    stack = []
    for token in tokens:
        if isinstance(token, float):
            stack.append(token)
        else:
            b, a = stack.pop(), stack.pop()
            stack.append(op(token, a, b))
    return stack.pop()
""",
    "node_class": """\
class Node:
    def __init__(self, value=None, successor=None):
        self.value = value
        self.successor = successor

    def successors(self):
        node = self
        node.visited = True
        return [self.successor] if self.successor else []
""",
}
