"""ERL (serdes/com/erl.py, as the IEEE COM code computes it) of the IEEE channel files
in ../shared/channels, each with its preset's sheet values and pass limit, with the CPU
time per file.

    PYTHONPATH=. python3 benchmarks/com_erl_channels.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from serdes.com.erl import compute_erl
from serdes.com.params import preset

CHANNELS = Path(os.environ.get("SERDES_CHANNELS",
                               Path(__file__).resolve().parents[1].parent / "shared" / "channels"))
FILES = [
    ("ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_12in_Meg7_THRU.s4p", "802.3ck-kr"),
    ("ieee8023ck_KR_ortho_tracy_3ck_02_0119/DPO_4in_Meg7_THRU.s4p", "802.3ck-kr"),
    ("ieee8023ck_CR_mellitz_3ck_04_1119/CA_19p75dB_thru.s4p", "802.3ck-cr"),
    ("ieee8023ck_C2C_gore_3ck_02_0519/C2C_PCB_SYSVIA_12dB_thru.s4p", "802.3ck-c2c"),
    ("ieee8023ck_C2M_mellitz_3ck_01_0518/C2M__Z100_IL14_WC_BOR_H_L_H_THRU.s4p", "802.3ck-c2m"),
    ("pychopmarg_example2_vita682/example2_THRU.s4p", "100gbase-kr4"),
]


def main() -> int:
    if not CHANNELS.exists():
        print(f"channel folder {CHANNELS} not present", file=sys.stderr)
        return 1
    for rel, name in FILES:
        p = preset(name)
        t = time.process_time()
        res = compute_erl(CHANNELS / rel, p)
        cpu = time.process_time() - t
        parts = []
        for e in res:
            d = e.as_dict()
            verdict = ("not rated" if not e.judged else "no limit" if d["pass"] is None
                       else "pass" if d["pass"] else "FAIL")
            parts.append(f"port {e.port} {e.erl_db:6.2f} dB ({verdict})")
        limit = f"{p.erl_limit_db:g} dB" if p.erl_limit_db > 0 else "-"
        print(f"{Path(rel).name:40s} {name:13s} limit {limit:8s} " + ", ".join(parts)
              + f"  {cpu:.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
