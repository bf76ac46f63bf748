"""Faults a `TestMcpServer` can inject, as frozen values, and the rules that say which request they hit.

Every fault is a frozen dataclass: printable, comparable, and convertible to JSON and back
(`fault.to_json()`, `from_json(data)`), so Hypothesis can generate and shrink it, a scenario file
can name it, and a journal can record it.

```python
server.inject(faults.Drop(after_execution=True), tool="create")   # the write ran, the client never hears
server.inject(faults.PageError(page=2))                           # the second tools/list page fails
```
"""

from __future__ import annotations

from mcp_testkit._wire.eras import ERAS
from mcp_testkit.faults._answers import (
    Accepted,
    Delay,
    ErrorResult,
    HttpStatus,
    LateAnswer,
    ProtocolError,
    WrongContentType,
)
from mcp_testkit.faults._auth import (
    AUTH_ENDPOINT_METHODS,
    AuthServerError,
    ExpireToken,
    InsufficientScope,
    RejectRefresh,
    RevokeToken,
    SlowAuthServer,
    WrongIssuer,
)
from mcp_testkit.faults._base import _ANY as _ANY
from mcp_testkit.faults._base import _KINDS as _KINDS
from mcp_testkit.faults._base import Fault, from_json
from mcp_testkit.faults._bytes import Bandwidth, Latency, LimitData, ResetPeer, Slice, SlowClose, StdoutNoise
from mcp_testkit.faults._connection import (
    BreakStream,
    Crash,
    Drop,
    EndStream,
    Exit,
    MalformedLine,
    MalformedSse,
    TruncateBody,
)
from mcp_testkit.faults._eras import DiscoverError, EraDowngrade, HeaderMismatch, MissingCapability, UnsupportedVersion
from mcp_testkit.faults._listing import (
    CatalogueChange,
    DuplicateTool,
    EmptyCursor,
    EndlessPages,
    InvalidCursor,
    ListChanged,
    MalformedPage,
    PageError,
    RepeatCursor,
    SlowPage,
    StuckCursor,
)
from mcp_testkit.faults._placing import OWN_DEFAULT, era_problem, placed_rule
from mcp_testkit.faults._rules import _DEFAULT as _DEFAULT
from mcp_testkit.faults._rules import LISTING_METHODS as LISTING_METHODS
from mcp_testkit.faults._rules import FaultPlan as FaultPlan
from mcp_testkit.faults._rules import MisplacedFault, Rule
from mcp_testkit.faults._rules import describe as describe
from mcp_testkit.faults._rules import misplaced as misplaced
from mcp_testkit.faults._rules import request_target as request_target
from mcp_testkit.faults._rules import rule_for as rule_for
from mcp_testkit.faults._sessions import ExpireSession, LoseSession, Restart
from mcp_testkit.faults._waits import Dribble, HugeResult, NeverAnswer, ProgressOnly, StopReading

__all__ = [
    "AUTH_ENDPOINT_METHODS",
    "ERAS",
    "OWN_DEFAULT",
    "Accepted",
    "AuthServerError",
    "Bandwidth",
    "BreakStream",
    "CatalogueChange",
    "Crash",
    "Delay",
    "DiscoverError",
    "Dribble",
    "Drop",
    "DuplicateTool",
    "EmptyCursor",
    "EndStream",
    "EndlessPages",
    "EraDowngrade",
    "ErrorResult",
    "Exit",
    "ExpireSession",
    "ExpireToken",
    "Fault",
    "HeaderMismatch",
    "HttpStatus",
    "HugeResult",
    "InsufficientScope",
    "InvalidCursor",
    "LateAnswer",
    "Latency",
    "LimitData",
    "ListChanged",
    "LoseSession",
    "MalformedLine",
    "MalformedPage",
    "MalformedSse",
    "MisplacedFault",
    "MissingCapability",
    "NeverAnswer",
    "PageError",
    "ProgressOnly",
    "ProtocolError",
    "RejectRefresh",
    "RepeatCursor",
    "ResetPeer",
    "Restart",
    "RevokeToken",
    "Rule",
    "Slice",
    "SlowAuthServer",
    "SlowClose",
    "SlowPage",
    "StdoutNoise",
    "StopReading",
    "StuckCursor",
    "TruncateBody",
    "UnsupportedVersion",
    "WrongContentType",
    "WrongIssuer",
    "era_problem",
    "from_json",
    "placed_rule",
]
