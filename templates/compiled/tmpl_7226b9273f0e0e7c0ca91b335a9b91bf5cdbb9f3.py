from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'cli/README.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('_shared/readme.md.j2', 'cli/README.md.j2')
    for name, parent_block in parent_template.blocks.items():
        context.blocks.setdefault(name, []).append(parent_block)
    yield from parent_template.root_render_func(context)

def block_about(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_model_prose = resolve('model_prose')
    pass
    yield 'A terminal agent (target `cli`) running the model '
    yield str((undefined(name='model_prose') if l_0_model_prose is missing else l_0_model_prose))
    yield '.\n'

def block_run(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield '```sh\n# interactive session\npython agent.py\n# one message, then exit\npython agent.py --message "hello"\n```\n'

def block_wiring(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'Wired once at boot by a single `wire_memory` call, scoped to the spec. State lives under\n`.specwire/` in the working directory.\n'

blocks = {'about': block_about, 'run': block_run, 'wiring': block_wiring}
debug_info = '1=12&2=17&3=27&5=30&13=40'