"""The standard board's roles, one module each, loaded in the order of data.yaml `roles:` (each
module declares ROLE, a rulesets.common.roles.Role)."""
