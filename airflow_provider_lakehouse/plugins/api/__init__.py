"""The JSON API behind the Lakehouse views, mounted by the api-server under :data:`~.app.URL_PREFIX`."""
