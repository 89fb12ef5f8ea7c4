"""wolfjudge's Alembic migrations, shipped with the distribution so that an installed
wolfjudge (not only a checkout) can `wolfjudge migrate`."""
