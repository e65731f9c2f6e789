from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'cli/agent.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_mcp_servers = resolve('mcp_servers')
    l_0_memoryless = resolve('memoryless')
    l_0_imports = resolve('imports')
    l_0_shared = missing
    try:
        t_1 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    pass
    l_0_shared = context.vars['shared'] = environment.get_template('_shared/python.j2', 'cli/agent.py.j2').make_module(context.get_all(), True, {'shared': l_0_shared})
    context.exported_vars.discard('shared')
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'agent_constants')))
    yield '\n'
    if (t_1((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
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
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'run_cli'))
    yield '(\n        spec_name=SPEC_NAME,\n        model=MODEL,\n        instructions=INSTRUCTIONS,\n        build_session=build_session,\n        argv=argv,\n'
    if (t_1((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield '        mcp_servers=MCP_SERVERS,\n'
    yield '    )\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_guard')))
    yield '\n'

blocks = {}
debug_info = '1=21&2=23&3=25&4=27&6=29&7=31&11=34&14=36&15=38&21=40&27=44'