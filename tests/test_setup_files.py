"""pip's requirements.txt and conda's environment.yml ask for the same packages."""

import re

import kp.files


def names(lines):
    return {
        re.split(r"[=<>\s#]", ln.strip(), maxsplit=1)[0].lower()
        for ln in lines
        if ln.strip() and not ln.strip().startswith("#")
    }


def test_requirements_and_environment_yml_agree():
    pip = names((kp.files.ROOT / "requirements.txt").read_text().splitlines())
    conda = set()
    yml = (kp.files.ROOT / "environment.yml").read_text()
    for ln in yml.split("dependencies:", 1)[1].splitlines():
        m = re.match(r"\s+- ([A-Za-z][\w.-]*)", ln)
        if m and m.group(1) not in ("python", "pip"):
            conda.add(m.group(1).lower())
    assert pip == conda, f"only in requirements.txt: {pip - conda}; only in environment.yml: {conda - pip}"


def test_torch_pins_agree():
    pin = re.search(r"^torch==(\S+)", (kp.files.ROOT / "requirements.txt").read_text(), re.M).group(1)
    assert f"torch=={pin}" in (kp.files.ROOT / "environment.yml").read_text()
