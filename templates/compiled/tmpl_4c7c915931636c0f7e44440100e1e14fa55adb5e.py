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
        t_1 = environment.filters['py']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'py' found.")
    try:
        t_2 = environment.tests['defined']
    except KeyError:
        @internalcode
        def t_2(*unused):
            raise TemplateRuntimeError("No test named 'defined' found.")
    pass
    l_0_shared = context.vars['shared'] = environment.get_template('_shared/python.j2', 'cli/agent.py.j2').make_module(context.get_all(), True, {'shared': l_0_shared})
    context.exported_vars.discard('shared')
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'agent_constants')))
    yield '\n'
    if (t_2((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield 'MCP_SERVERS = {\n'
        for l_1_server in (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers):
            _loop_vars = {}
            pass
            yield '    '
            yield str(t_1(environment.getattr(l_1_server, 'name')))
            yield ': {\n        "transport": '
            yield str(t_1(environment.getattr(l_1_server, 'transport')))
            yield ',\n'
            if (environment.getattr(l_1_server, 'transport') == 'stdio'):
                pass
                yield '        "command": '
                yield str(t_1(environment.getattr(l_1_server, 'command')))
                yield ',\n        "args": [\n'
                for l_2_arg in environment.getattr(l_1_server, 'args'):
                    _loop_vars = {}
                    pass
                    yield '            '
                    yield str(t_1(l_2_arg))
                    yield ',\n'
                l_2_arg = missing
                yield '        ],\n        "env": {\n'
            else:
                pass
                yield '        "url": '
                yield str(t_1(environment.getattr(l_1_server, 'url')))
                yield ',\n        "headers": {\n'
            for l_2_setting in environment.getattr(l_1_server, 'settings'):
                _loop_vars = {}
                pass
                if environment.getattr(l_2_setting, 'secret'):
                    pass
                    yield '            '
                    yield str(t_1(environment.getattr(l_2_setting, 'key')))
                    yield ': '
                    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'SecretRef', _loop_vars=_loop_vars))
                    yield '('
                    yield str(t_1(environment.getattr(l_2_setting, 'value')))
                    yield '),\n'
                else:
                    pass
                    yield '            '
                    yield str(t_1(environment.getattr(l_2_setting, 'key')))
                    yield ': '
                    yield str(t_1(environment.getattr(l_2_setting, 'value')))
                    yield ',\n'
            l_2_setting = missing
            yield '        },\n        "optional": '
            yield str(t_1(environment.getattr(l_1_server, 'optional')))
            yield ',\n'
            if (not environment.getattr(l_1_server, 'sandbox')):
                pass
                yield '        "sandbox": False,\n'
            if (environment.getattr(l_1_server, 'network') == 'outbound'):
                pass
                yield '        "network": "outbound",\n'
            yield '    },\n'
        l_1_server = missing
        yield '}\n'
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
    if (t_2((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield '        mcp_servers=MCP_SERVERS,\n'
    yield '    )\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_guard')))
    yield '\n'

blocks = {}
debug_info = '1=27&2=29&3=31&5=34&6=38&7=40&8=42&9=45&11=47&12=51&17=58&20=60&21=63&22=66&24=75&28=81&29=83&32=86&39=92&40=94&44=97&47=99&48=101&54=103&60=107'