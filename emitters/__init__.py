"""Emitters: IR → ``Bundle`` per target (pure), the render → format → verify pipeline, the
writer and the ``codegen`` command.

Public API: ``emitters.registry.emit(spec) -> Bundle`` (or ``emitters.<target>.emit``),
``emitters.bundle.Bundle``, ``emitters.writer.write_bundle / check / diff``,
``emitters.command.main``. Kept import-free so ``emitters.bundle`` stays cheap to import.
"""
