"""Tests of the reference bridge (a package, so that its tests can share helpers from conftest)."""
