from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'crew/agent.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_imports = resolve('imports')
    l_0_spec_name = resolve('spec_name')
    l_0_model = resolve('model')
    l_0_entry = resolve('entry')
    l_0_tools = resolve('tools')
    l_0_bash_options = resolve('bash_options')
    l_0_roles = resolve('roles')
    l_0_mcp_servers = resolve('mcp_servers')
    l_0_memoryless = resolve('memoryless')
    l_0_shared = l_0_RoleConfig = missing
    try:
        t_1 = environment.filters['py']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'py' found.")
    try:
        t_2 = environment.filters['py_text']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No filter named 'py_text' found.")
    try:
        t_3 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    try:
        t_4 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_4(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    l_0_shared = context.vars['shared'] = environment.get_template('_shared/python.j2', 'crew/agent.py.j2').make_module(context.get_all(), True, {'RoleConfig': l_0_RoleConfig, 'shared': l_0_shared})
    context.exported_vars.discard('shared')
    l_0_RoleConfig = context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'RoleConfig')
    context.vars['RoleConfig'] = l_0_RoleConfig
    context.exported_vars.add('RoleConfig')
    yield 'SPEC_NAME = '
    yield str(t_1((undefined(name='spec_name') if l_0_spec_name is missing else l_0_spec_name)))
    yield '\nMODEL = '
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'model_literal'), (undefined(name='model') if l_0_model is missing else l_0_model)))
    yield '\nENTRY = '
    yield str(t_1((undefined(name='entry') if l_0_entry is missing else l_0_entry)))
    yield '\nTOOLS: tuple[str, ...] = '
    yield str(t_1((undefined(name='tools') if l_0_tools is missing else l_0_tools)))
    yield '\n'
    if (t_3((undefined(name='bash_options') if l_0_bash_options is missing else l_0_bash_options)) and (undefined(name='bash_options') if l_0_bash_options is missing else l_0_bash_options)):
        pass
        yield 'BASH_OPTIONS = '
        yield str(t_1((undefined(name='bash_options') if l_0_bash_options is missing else l_0_bash_options)))
        yield '\n'
    yield 'ROLES: tuple['
    yield str((undefined(name='RoleConfig') if l_0_RoleConfig is missing else l_0_RoleConfig))
    yield ', ...] = (\n'
    for l_1_role in (undefined(name='roles') if l_0_roles is missing else l_0_roles):
        _loop_vars = {}
        pass
        yield '    '
        yield str((undefined(name='RoleConfig') if l_0_RoleConfig is missing else l_0_RoleConfig))
        yield '(\n        name='
        yield str(t_1(environment.getattr(l_1_role, 'name')))
        yield ',\n        instructions='
        yield str(t_2(environment.getattr(l_1_role, 'instructions')))
        yield ',\n'
        if (not t_4(environment.getattr(l_1_role, 'model'))):
            pass
            yield '        model='
            yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'model_literal'), environment.getattr(l_1_role, 'model'), _loop_vars=_loop_vars))
            yield ',\n'
        if environment.getattr(l_1_role, 'model_pool'):
            pass
            yield '        model_pool='
            yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'model_tuple'), environment.getattr(l_1_role, 'model_pool'), _loop_vars=_loop_vars))
            yield ',\n'
        if environment.getattr(l_1_role, 'model_fallbacks'):
            pass
            yield '        model_fallbacks='
            yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'model_tuple'), environment.getattr(l_1_role, 'model_fallbacks'), _loop_vars=_loop_vars))
            yield ',\n'
        yield '    ),\n'
    l_1_role = missing
    yield ')\n'
    if (t_3((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'mcp_servers_constant')))
        yield '\n'
    if (not (undefined(name='memoryless') if l_0_memoryless is missing else l_0_memoryless)):
        pass
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'fragment_constant')))
        yield '\n'
    yield '\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'build_session'), audience=True))
    yield '\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_signature')))
    yield '\n    return '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'run_crew'))
    yield '(\n        spec_name=SPEC_NAME,\n        model=MODEL,\n        entry=ENTRY,\n        roles=ROLES,\n        build_session=build_session,\n        argv=argv,\n'
    if (t_3((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield '        mcp_servers=MCP_SERVERS,\n'
    yield '    )\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_guard')))
    yield '\n'

blocks = {}
debug_info = '1=45&2=47&3=51&4=53&5=55&6=57&7=59&8=62&10=65&11=67&12=71&13=73&14=75&15=77&16=80&18=82&19=85&21=87&22=90&27=95&28=97&30=99&31=101&35=104&38=106&39=108&46=110&52=114'