"""Hostile: os._exit(0) while being imported, hoping a clean exit reads as success."""
import os

os._exit(0)


def add(a, b):
    return 0


def mul(a, b):
    return 0
