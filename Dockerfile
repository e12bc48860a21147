# Image for compose.yaml: the app with its CPU-only dependencies and the embedding model (shipped in a wheel).
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# git, for a git repository as the garden (GARDEN_GIT_URL).
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml ./
# torch first and pinned, so the CPU build is used rather than a multi-GB CUDA one; then the runtime set only
# (no dev or calibrate extra).
RUN pip install "torch==2.13.0" && pip install -e .
# .dockerignore keeps secrets (.env), data (.run/) and history (.git) out of what is copied.
COPY . .
RUN DJANGO_SETTINGS_MODULE=config.settings.production SECRET_KEY=build-only python manage.py collectstatic --noinput
# The app runs as a user of its own, who owns only the caches it writes (the ONNX exports, the judge's
# calibration features, a git garden's clone); the code and the collected static files stay root's, read-only to it.
RUN useradd --system --create-home --uid 10001 groundwork \
    && mkdir -p .run/onnx .run/calibration .run/git \
    && chown groundwork:groundwork .run/onnx .run/calibration .run/git
USER groundwork
EXPOSE 8000
