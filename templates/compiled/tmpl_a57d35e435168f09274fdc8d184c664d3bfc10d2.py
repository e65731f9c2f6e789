from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_shared/header.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_header_lines = resolve('header_lines')
    pass
    yield '<!-- '
    yield str(environment.getitem((undefined(name='header_lines') if l_0_header_lines is missing else l_0_header_lines), 0))
    yield '\n     '
    yield str(environment.getitem((undefined(name='header_lines') if l_0_header_lines is missing else l_0_header_lines), 1))
    yield ' -->\n'

blocks = {}
debug_info = '1=13&2=15'