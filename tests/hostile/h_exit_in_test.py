"""Hostile: os._exit(0) in the middle of a test."""
import os


def add(a, b):
    os._exit(0)


def mul(a, b):
    return 0
