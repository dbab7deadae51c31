"""Utilities that know nothing of C-RASP: atomic writes (``atomic``), bounded reads of untrusted
files (``safe_read``), the places commands write to (``outputs``), input lines (``inputs``),
text tables (``tables``), the running code's fingerprint (``code_fingerprint``) and deep
recursion (``deep_stack``). They import nothing from crasp but ``crasp.errors``; everything
else may import them.
"""
