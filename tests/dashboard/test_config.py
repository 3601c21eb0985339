"""Site configuration: defaults, branding, registered rule sets, and errors naming the file
and the field (pydantic models: unknown fields refused, TOML types taken strictly)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.config import SiteConfig, load_config
from roads.errors import InputError
from roads.rules import PRESETS


def test_defaults_without_a_file() -> None:
    site = load_config(None)
    assert site.theme == "dark" and site.language == "en" and site.table("T9").name == "T9"
    assert (site.https, site.trusted_proxies, site.rule_sets) == (False, [], {})
    assert site.dealt_at_tolerance_seconds == 300


def test_branding_and_tables(tmp_path: Path) -> None:
    (tmp_path / "logo.svg").write_text("<svg/>")
    path = tmp_path / "site.toml"
    path.write_text('casino = "Casino Lisboa"\nlogo = "logo.svg"\naccent = "#112233"\n'
                    'theme = "classic"\nlanguage = "zh-Hant"\nhttps = true\n'
                    'trusted_proxies = ["10.0.0.5", "192.168.0.0/24"]\n'
                    '[tables.T01]\nname = "Salon 1"\n'
                    'min_bet = 100\nmax_bet = 50000\ncurrency = "HKD"\n'
                    '[limits]\nbody_seconds = 4\n')
    site = load_config(path)
    assert (site.casino, site.accent, site.theme, site.language) == \
        ("Casino Lisboa", "#112233", "classic", "zh-Hant")
    assert site.logo == tmp_path / "logo.svg"
    assert site.table("T01").limits() == "HKD 100 – 50,000"
    assert site.https and site.trusted_proxies == ["10.0.0.5", "192.168.0.0/24"]
    assert site.limits.body_seconds == 4 and site.limits.api_body_bytes == 8192


def test_rule_sets_are_registered_by_name_never_reached_by_path(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    club = tmp_path / "rules" / "club.toml"
    club.write_text('name = "club-6"\nbase = "standard-6"\n[payouts]\ntie = "9:1"\n')
    path = tmp_path / "site.toml"
    path.write_text('[rule_sets]\nclub-6 = "rules/club.toml"\n[tables.T1]\nrules = "club-6"\n')
    site = load_config(path)
    assert site.rule_set("club-6").tie_payout == 9 and site.rule_set("club-6").decks == 6
    assert site.rule_set("ez-8") is PRESETS["ez-8"]
    club.unlink()  # read once at start: moving the file later breaks nothing
    assert site.rule_set("club-6").decks == 6
    for name in (str(club), "rules/club.toml", "/etc/passwd", "../x.toml"):
        with pytest.raises(InputError, match=r"unknown rule set .*known: standard-8.*club-6"):
            site.rule_set(name)


@pytest.mark.parametrize(("text", "message"), [
    ('theme = "neon"', "field theme: unknown theme 'neon'"),
    ('language = "fr"', "field language: unknown language 'fr'"),
    ('accent = "red"', "field accent: expected a colour"),
    ('logo = "missing.png"', "field logo: no such file 'missing.png'"),
    ("[tables]\nT1 = 3", "field tables.T1 must be a table"),
    ('[tables.T1]\nmin_bet = "100"', "field tables.T1.min_bet must be an integer"),
    ('[tables.T1]\nrules = "/etc/club.toml"', "field tables.T1.rules: unknown rule set"),
    ('https = "yes"', "field https must be true or false"),
    ('trusted_proxy = ["10.0.0.1"]', "unknown field trusted_proxy"),
    ('trusted_proxies = ["proxy.local"]', "field trusted_proxies: 'proxy.local' is not an IP"),
    ('[rule_sets]\nclub = "none.toml"', "field rule_sets.club: .*no such rule-set file"),
    ('[rule_sets]\nstandard-8 = "x.toml"', "field rule_sets.standard-8: 'standard-8' is a "
                                          "preset"),
    ('[limits]\nbody_bytes = 10', "unknown field limits.body_bytes"),
    ("dealt_at_tolerance_seconds = -1", "field dealt_at_tolerance_seconds: .*greater than"),
])
def test_errors_name_the_file_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "site.toml"
    path.write_text(text + "\n")
    with pytest.raises(InputError, match=message) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}: ")


def test_a_registered_file_must_name_its_rule_set_as_registered(tmp_path: Path) -> None:
    (tmp_path / "club.toml").write_text('name = "club-6"\n')
    (tmp_path / "site.toml").write_text('[rule_sets]\nclub-8 = "club.toml"\n')
    with pytest.raises(InputError, match="names its rule set 'club-6'"):
        load_config(tmp_path / "site.toml")


def test_a_bad_rule_set_file_is_named_with_its_field(tmp_path: Path) -> None:
    (tmp_path / "club.toml").write_text('name = "club-6"\n[payouts]\ncolour = "red"\n')
    (tmp_path / "site.toml").write_text('[rule_sets]\nclub-6 = "club.toml"\n')
    with pytest.raises(InputError, match=r"club.toml: unknown field payouts.colour"):
        load_config(tmp_path / "site.toml")


def test_unreadable_toml_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "site.toml"
    path.write_text("casino = \n")
    with pytest.raises(InputError, match="invalid TOML"):
        load_config(path)
    path.write_bytes(b'casino = "\xff"\n')
    with pytest.raises(InputError, match="cannot read the site configuration"):
        load_config(path)


def test_config_in_code_is_validated_too() -> None:
    with pytest.raises(ValueError, match="theme"):
        SiteConfig(theme="neon")
