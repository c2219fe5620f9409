"""Tests of the registers."""
