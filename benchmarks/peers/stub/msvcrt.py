"""Stand-in for Windows' msvcrt so pybaccarat (which imports it at import time) loads here.

The standard library decides "am I on Windows?" by whether msvcrt imports; refuse those
imports so only pybaccarat sees this module.
"""
import sys
from types import FrameType

_frame: FrameType | None = sys._getframe()
while _frame is not None:
    if _frame.f_globals.get("__name__", "").split(".")[0] in (
            "subprocess", "multiprocessing", "asyncio", "getpass", "pip", "_distutils_hack",
            "distutils"):
        raise ModuleNotFoundError("No module named 'msvcrt'", name="msvcrt")
    _frame = _frame.f_back


def getch() -> bytes:
    return b"\n"
