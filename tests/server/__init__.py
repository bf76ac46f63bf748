"""Tests of `TestMcpServer`: the wire, the SDK client against it, tools, journal, lifecycle, streams."""
