"""Compiler: C-RASP programs to fixed-precision transformer weights."""
