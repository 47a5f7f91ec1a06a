from accordkit.ingest.formats.tau2.personas import UNMATCHED, persona_id


def test_raw_id_is_kept():
    assert persona_id("HARD_1", domain="banking") == "HARD_1"


def test_no_persona_is_null():
    assert persona_id(None, domain="retail") is None
    assert persona_id("   ", domain="retail") is None


def test_unknown_text_is_unmatched():
    assert persona_id("A brand-new persona text.", domain="airline") == UNMATCHED


def test_tau2_telecom_tag_is_used():
    tid = "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:Easy]"
    assert persona_id("Some free text persona", domain="telecom", task_id=tid) == "Easy"
    assert persona_id(None, domain="telecom", task_id=tid) == "Easy"


def test_fixture_texts_hash_to_ids(acb_dir):
    import json

    data = json.loads((acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json").read_text())
    ids = [persona_id(t["user_scenario"]["persona"], domain="banking") for t in data["tasks"]]
    assert UNMATCHED not in ids
    assert set(ids) == {"EASY_1", "EASY_2", "MEDIUM_1", "MEDIUM_2", "HARD_1"}
