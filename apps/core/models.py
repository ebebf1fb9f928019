# The core app holds shared non-model code (exceptions, health view, commands); no models.
