from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'research/agent.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_goal = resolve('goal')
    l_0_branching_factor = resolve('branching_factor')
    l_0_max_duration_ms = resolve('max_duration_ms')
    l_0_allowed_origins = resolve('allowed_origins')
    l_0_mcp_servers = resolve('mcp_servers')
    l_0_memoryless = resolve('memoryless')
    l_0_imports = resolve('imports')
    l_0_shared = missing
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
    pass
    l_0_shared = context.vars['shared'] = environment.get_template('_shared/python.j2', 'research/agent.py.j2').make_module(context.get_all(), True, {'shared': l_0_shared})
    context.exported_vars.discard('shared')
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'agent_constants')))
    yield '\nGOAL = '
    yield str(t_2((undefined(name='goal') if l_0_goal is missing else l_0_goal)))
    yield '\nBRANCHING_FACTOR = '
    yield str(t_1((undefined(name='branching_factor') if l_0_branching_factor is missing else l_0_branching_factor)))
    yield '\nMAX_DURATION_MS = '
    yield str(t_1((undefined(name='max_duration_ms') if l_0_max_duration_ms is missing else l_0_max_duration_ms)))
    yield '\nALLOWED_ORIGINS: tuple[str, ...] = '
    yield str(t_1((undefined(name='allowed_origins') if l_0_allowed_origins is missing else l_0_allowed_origins)))
    yield '\n'
    if (t_3((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'mcp_servers_constant')))
        yield '\n'
    if (not (undefined(name='memoryless') if l_0_memoryless is missing else l_0_memoryless)):
        pass
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'fragment_constant')))
        yield '\n'
    yield '\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'build_session')))
    yield '\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_signature')))
    yield '\n    return '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'run_research'))
    yield '(\n        spec_name=SPEC_NAME,\n        model=MODEL,\n        instructions=INSTRUCTIONS,\n        goal=GOAL,\n        branching_factor=BRANCHING_FACTOR,\n        max_duration_ms=MAX_DURATION_MS,\n        allowed_origins=ALLOWED_ORIGINS,\n        build_session=build_session,\n        argv=argv,\n'
    if (t_3((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield '        mcp_servers=MCP_SERVERS,\n'
    yield '    )\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_guard')))
    yield '\n'

blocks = {}
debug_info = '1=37&2=39&3=41&4=43&5=45&6=47&7=49&8=51&10=53&11=55&15=58&18=60&19=62&29=64&35=68'