"""The static files storage of production: whitenoise's compressed manifest storage, with the
explorables' ES module imports rewritten to the hashed names.

Every file is served under a name with its content's hash and cached for good. A module that
imports ``./svg.mjs`` by its plain name would load whatever copy of svg.mjs a cache still holds
beside the new importer after a deploy, so the imports of our own modules are rewritten like the
``url()`` of a stylesheet. Django can rewrite imports in every ``*.js`` file
(``support_js_module_import_aggregation``), but its patterns would then also run over the
vendored bundles (Ace, swagger-ui, the admin's jQuery), whose strings and comments can look like
imports of files that do not exist and fail collectstatic; so they apply to our modules only.
"""

from __future__ import annotations

from django.contrib.staticfiles.storage import HashedFilesMixin
from whitenoise.storage import CompressedManifestStaticFilesStorage

# The import/export patterns Django applies with support_js_module_import_aggregation.
_MODULE_IMPORT_PATTERNS = HashedFilesMixin._js_module_import_aggregation_patterns[1]
# Our ES modules: the explorables and the submission plots (static/explorables/).
MODULE_FILES = ("explorables/*.mjs", "explorables/*.js")


class ManifestStaticFilesStorage(CompressedManifestStaticFilesStorage):
    patterns = (
        *CompressedManifestStaticFilesStorage.patterns,
        *((files, _MODULE_IMPORT_PATTERNS) for files in MODULE_FILES),
    )
