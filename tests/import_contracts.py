"""A custom import-linter contract: a package may import only the standard library and a list.

`grader.engine.sandbox.inside` runs inside the sandbox, where only the standard library, numpy and
the seccomp binding exist; a forbidden-list contract cannot say "nothing else", this one can.
Its modules import their siblings by bare name (`import layers`), because the sandbox runs them
from its own directory, so those names are allowed explicitly.
"""

from __future__ import annotations

import sys

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


class AllowedImportsContract(Contract):
    source_modules = fields.ListField(subfield=fields.ModuleField())
    allowed_modules = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        allowed = {str(m) for m in self.allowed_modules} | set(sys.stdlib_module_names)
        violations: list[tuple[str, str]] = []
        for source in self.source_modules:
            package = source.name
            for importer in sorted({package} | graph.find_descendants(package)):
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    inside = imported == package or imported.startswith(package + ".")
                    if not inside and imported.split(".")[0] not in allowed:
                        violations.append((importer, imported))
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for importer, imported in check.metadata["violations"]:
            output.print_error(f"{importer} imports {imported}, which is not allowed here.")
            output.new_line()
