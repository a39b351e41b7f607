"""The rules as Python values."""

import pytest

import aclmem


def test_allowed_combinations_have_code_0():
    v = aclmem.check("Ascend910B3", "device", "ACL_HBM_MEM_HUGE")
    assert v["allowed"] and v["code"] == 0 and v["product"] == "a2"


def test_a_feature_of_a_later_release_names_it():
    v = aclmem.check("atlas-a2", "device", "ACL_MEM_HUGE", cann="8.3")
    assert not v["allowed"]
    assert v["denial"] == "needs-newer-cann"
    assert v["since"].startswith("8.5")
    assert aclmem.check("atlas-a2", "device", "ACL_MEM_HUGE", cann="8.5")["allowed"]


def test_the_rc_form_is_refused_with_207000():
    v = aclmem.check("Ascend310B1", "device", "ACL_HBM_MEM_HUGE", run_mode="rc")
    assert (v["allowed"], v["code"], v["denial"]) == (False, 207000, "rc-form")


def test_matrix_rows_agree_with_check():
    rows = aclmem.matrix(cann="9.0")
    assert len(rows) > 100
    for row in rows[::37]:
        again = aclmem.check(row["product"], row["location"], row["attribute"], "9.0", row["run_mode"])
        assert again == row


@pytest.mark.parametrize(
    "args",
    [
        ("Ascend999", "device", "ACL_HBM_MEM_HUGE"),
        ("Ascend910B3", "cloud", "ACL_HBM_MEM_HUGE"),
        ("Ascend910B3", "device", "ACL_NOT_AN_ATTR"),
        ("Ascend910B3", "device", 99),
    ],
)
def test_unknown_names_raise_value_error(args):
    with pytest.raises(ValueError):
        aclmem.check(*args)


def test_constants_and_releases():
    c = aclmem.constants
    assert c["ACL_HBM_MEM_HUGE"] == 4 and c["ACL_ERROR_RT_MEMORY_ALLOCATION"] == 207001
    assert aclmem.cann_releases()[-1].startswith("9.1")


def test_names_parse_as_the_cli_parses_them():
    # One parser per name: case and punctuation are ignored everywhere.
    lower = aclmem.check("a2", "device", "ACL_HBM_MEM_HUGE", cann="8.3")
    assert aclmem.check("A2", "Device", "acl_hbm_mem_huge", cann="8.3.RC1") == lower
    assert aclmem.check("AtlasA2", "DEVICE", "HbmHuge", cann="8.3", run_mode="EP") == lower
    with pytest.raises(ValueError, match="did you mean `host`"):
        aclmem.check("a2", "hots", "ACL_HBM_MEM_HUGE")
    with pytest.raises(ValueError):
        aclmem.check("a2", "device", "ACL_HBM_MEM_HUGE", cann="8.3.garbage")


def test_the_dict_is_the_cli_json_record():
    import json
    import os
    import pathlib
    import subprocess

    root = pathlib.Path(__file__).resolve().parents[2]
    cli = os.environ.get("ACLMEM_CLI") or str(root / "target" / "debug" / "aclmem")
    if not pathlib.Path(cli).exists():
        pytest.fail(f"the aclmem CLI is not built at {cli}: run `cargo build -p aclmem-cli`")
    out = subprocess.run(
        [cli, "matrix", "--cann", "8.3", "--format", "json"],
        capture_output=True, text=True, check=True, timeout=60,
    )
    rows = json.loads(out.stdout)
    assert rows == aclmem.matrix(cann="8.3")
    huge = aclmem.check("a2", "device", "ACL_MEM_HUGE", cann="8.3")
    assert (huge["since"], huge["code"], huge["denial"]) == ("8.5", 100000, "needs-newer-cann")
