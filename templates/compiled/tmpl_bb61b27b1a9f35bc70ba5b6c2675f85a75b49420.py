from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'crew/README.md.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    parent_template = None
    pass
    parent_template = environment.get_template('_shared/readme.md.j2', 'crew/README.md.j2')
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
    l_0_roles = resolve('roles')
    l_0_model_prose = resolve('model_prose')
    l_0_entry = resolve('entry')
    try:
        t_1 = environment.filters['join']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'join' found.")
    try:
        t_2 = environment.filters['length']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'length' found.")
    try:
        t_3 = environment.filters['map']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No filter named 'map' found.")
    try:
        t_4 = environment.filters['md_code']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No filter named 'md_code' found.")
    pass
    yield 'A crew (target `crew`) of '
    yield str(t_2((undefined(name='roles') if l_0_roles is missing else l_0_roles)))
    yield ' roles running the model '
    yield str((undefined(name='model_prose') if l_0_model_prose is missing else l_0_model_prose))
    yield '.\nRoles: '
    yield str(t_1(context.eval_ctx, t_3(context, t_3(context, (undefined(name='roles') if l_0_roles is missing else l_0_roles), attribute='name'), 'md_code'), ', '))
    yield '; the run starts with\n'
    yield str(t_4((undefined(name='entry') if l_0_entry is missing else l_0_entry)))
    yield '.\n'
    def t_5(fiter):
        for l_1_role in fiter:
            if (environment.getattr(l_1_role, 'model_pool') or environment.getattr(l_1_role, 'model_fallbacks')):
                yield l_1_role
    l_1_loop = missing
    for l_1_role, l_1_loop in LoopContext(t_5((undefined(name='roles') if l_0_roles is missing else l_0_roles)), undefined):
        _loop_vars = {}
        pass
        if environment.getattr(l_1_loop, 'first'):
            pass
            yield '\n'
        yield '- Role '
        yield str(t_4(environment.getattr(l_1_role, 'name')))
        yield ':\n'
        if environment.getattr(l_1_role, 'model_pool'):
            pass
            yield '  each session takes the next model of its pool,\n  '
            yield str(t_1(context.eval_ctx, t_3(context, environment.getattr(l_1_role, 'model_pool'), attribute='prose'), ', '))
            yield str((';' if environment.getattr(l_1_role, 'model_fallbacks') else '.'))
            yield '\n'
        if environment.getattr(l_1_role, 'model_fallbacks'):
            pass
            yield '  when a model fails with a retryable error (rate limited, overloaded, a server error, a\n  timeout) it falls back to '
            yield str(t_1(context.eval_ctx, t_3(context, environment.getattr(l_1_role, 'model_fallbacks'), attribute='prose'), ', then '))
            yield '.\n'
    l_1_loop = l_1_role = missing

def block_run(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    pass
    yield '```sh\n# talk to the entry role\npython agent.py\n# one message to another role, then exit\npython agent.py --role <role> --message "hello"\n```\n'

def block_wiring(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    _block_vars = {}
    l_0_has_memory = resolve('has_memory')
    l_0_scope_note = resolve('scope_note')
    pass
    if ((undefined(name='has_memory') if l_0_has_memory is missing else l_0_has_memory) and (undefined(name='scope_note') if l_0_scope_note is missing else l_0_scope_note)):
        pass
        yield "Wired by one `wire_memory` call per role (with the role's audience); every role shares the same\nstores, so the plan is the crew's coordination surface. State lives under `.specwire/` in the\nworking directory.\n"
        yield str((undefined(name='scope_note') if l_0_scope_note is missing else l_0_scope_note))
        yield '\n'
    else:
        pass
        yield "Wired once at boot by a single `wire_memory` call; every role shares the same stores, so the\nplan is the crew's coordination surface. State lives under `.specwire/` in the working directory.\n"

blocks = {'about': block_about, 'run': block_run, 'wiring': block_wiring}
debug_info = '1=12&2=17&3=53&4=57&5=59&6=61&7=69&10=73&11=75&13=78&15=81&17=84&21=88&29=98&30=108&34=111'