from django.apps import AppConfig


class GardenConfig(AppConfig):
    name = "garden"
    verbose_name = "Knowledge garden"
