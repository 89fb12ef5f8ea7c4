# The bot: `wolfjudge run` (WeChat through the gateway's puppet service, PostgreSQL).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 CACHE_DIR=/data/wechaty
WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine engine
COPY rulesets rulesets
COPY bot bot
COPY migrations migrations
RUN pip install --no-cache-dir . && useradd --create-home wolfjudge && mkdir -p /data \
    && chown wolfjudge /data
USER wolfjudge
WORKDIR /data
# The schema first (idempotent), then the bot; the health check asks the database.
CMD ["sh", "-c", "wolfjudge migrate && exec wolfjudge run"]
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD python -c "from bot.store import Database; Database().dispose()" || exit 1
