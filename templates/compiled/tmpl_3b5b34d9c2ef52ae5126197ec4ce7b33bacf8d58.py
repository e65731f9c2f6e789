from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_shared/header.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_header_lines = resolve('header_lines')
    l_0_imports = resolve('imports')
    l_0_specwire_version = resolve('specwire_version')
    l_0_bundle_module = missing
    pass
    l_0_bundle_module = 'specwire.runtime.bundle'
    context.vars['bundle_module'] = l_0_bundle_module
    context.exported_vars.add('bundle_module')
    for l_1_line in (undefined(name='header_lines') if l_0_header_lines is missing else l_0_header_lines):
        _loop_vars = {}
        pass
        yield '# '
        yield str(l_1_line)
        yield '\n'
    l_1_line = missing
    yield '\n'
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'render'), without=(undefined(name='bundle_module') if l_0_bundle_module is missing else l_0_bundle_module)))
    yield '\n'
    if context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'names_from'), (undefined(name='bundle_module') if l_0_bundle_module is missing else l_0_bundle_module)):
        pass
        yield '\ntry:\n    from '
        yield str((undefined(name='bundle_module') if l_0_bundle_module is missing else l_0_bundle_module))
        yield ' import (\n'
        for l_1_name in context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'names_from'), (undefined(name='bundle_module') if l_0_bundle_module is missing else l_0_bundle_module)):
            _loop_vars = {}
            pass
            yield '        '
            yield str(l_1_name)
            yield ',\n'
        l_1_name = missing
        yield '    )\nexcept ImportError as missing:\n    if not (missing.name or "").startswith("specwire"):\n        raise\n    raise SystemExit(\n        "this agent needs specwire '
        yield str((undefined(name='specwire_version') if l_0_specwire_version is missing else l_0_specwire_version))
        yield ' or newer in the Python that runs it: "\n        "pip install /path/to/specwire-checkout, or pip install specwire-'
        yield str((undefined(name='specwire_version') if l_0_specwire_version is missing else l_0_specwire_version))
        yield '-py3-none-any.whl"\n    ) from None\n'

blocks = {}
debug_info = '8=15&9=18&10=22&13=26&14=28&17=31&18=33&19=37&26=41&27=43'