from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'research/README.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('_shared/readme.md.j2', 'research/README.md.j2')
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
    l_0_branching_factor = resolve('branching_factor')
    l_0_max_duration_ms = resolve('max_duration_ms')
    pass
    yield 'A research run (target `research`) running the model '
    yield str((undefined(name='model_prose') if l_0_model_prose is missing else l_0_model_prose))
    yield ': it explores\n'
    yield str((undefined(name='branching_factor') if l_0_branching_factor is missing else l_0_branching_factor))
    yield ' branches toward its goal for at most '
    yield str((undefined(name='max_duration_ms') if l_0_max_duration_ms is missing else l_0_max_duration_ms))
    yield ' ms.\n'

def block_run(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield '```sh\n# research the spec\'s goal\npython agent.py\n# research another goal\npython agent.py --goal "another goal"\n```\n'

def block_wiring(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield 'Wired once at boot by a single `wire_memory` call; every branch shares the same stores. State\nlives under `.specwire/` in the working directory.\n'

blocks = {'about': block_about, 'run': block_run, 'wiring': block_wiring}
debug_info = '1=12&2=17&3=29&4=31&6=36&14=46'