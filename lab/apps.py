from django.apps import AppConfig


class LabConfig(AppConfig):
    name = "lab"
    label = "lab"
    verbose_name = "Evaluation and benchmarks"
