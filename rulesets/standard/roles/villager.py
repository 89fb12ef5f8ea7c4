"""村民: no skill; the role is its name (and its data: role_names, role_help)."""

from rulesets.common.roles import Role

ROLE = Role(name="villager")
