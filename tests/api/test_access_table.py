from hausbox.api.access import access_for


def test_writes_are_admin_unless_allowlisted():
    assert access_for("POST", "/zones") == "admin"
    assert access_for("PATCH", "/dashboard/widgets/<id>") == "admin"
    assert access_for("POST", "/zones/<id>/orders/<orderKey>") == "user"
    assert access_for("POST", "/me/mfa/totp/setup") == "user"
    assert access_for("DELETE", "/me/mfa/trusted-devices/<id>") == "user"
    assert access_for("POST", "/mfa/anything") == "admin"


def test_reads_are_open_except_the_admin_groups():
    assert access_for("GET", "/zones") == "user"
    assert access_for("GET", "/settings") == "admin"
    assert access_for("GET", "/settings/energy/tariff") == "user"
    assert access_for("GET", "/plugins/<id>") == "admin"
    assert access_for("GET", "/plugins/<id>/oauth/callback") == "public"
    assert access_for("GET", "/health") == "public"
