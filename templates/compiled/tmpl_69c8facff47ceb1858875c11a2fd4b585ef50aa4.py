from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'channel/agent.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_imports = resolve('imports')
    l_0_session_key = resolve('session_key')
    l_0_channels = resolve('channels')
    l_0_mcp_servers = resolve('mcp_servers')
    l_0_memoryless = resolve('memoryless')
    l_0_shared = l_0_ChannelConfig = l_0_TurnSetup = missing
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
    l_0_shared = context.vars['shared'] = environment.get_template('_shared/python.j2', 'channel/agent.py.j2').make_module(context.get_all(), True, {'ChannelConfig': l_0_ChannelConfig, 'TurnSetup': l_0_TurnSetup, 'shared': l_0_shared})
    context.exported_vars.discard('shared')
    l_0_ChannelConfig = context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'ChannelConfig')
    context.vars['ChannelConfig'] = l_0_ChannelConfig
    context.exported_vars.add('ChannelConfig')
    l_0_TurnSetup = context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'TurnSetup')
    context.vars['TurnSetup'] = l_0_TurnSetup
    context.exported_vars.add('TurnSetup')
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'agent_constants')))
    yield '\nSESSION_KEY = '
    yield str(t_1((undefined(name='session_key') if l_0_session_key is missing else l_0_session_key)))
    yield '\nCHANNELS: tuple['
    yield str((undefined(name='ChannelConfig') if l_0_ChannelConfig is missing else l_0_ChannelConfig))
    yield ', ...] = (\n'
    for l_1_channel in (undefined(name='channels') if l_0_channels is missing else l_0_channels):
        _loop_vars = {}
        pass
        yield '    '
        yield str((undefined(name='ChannelConfig') if l_0_ChannelConfig is missing else l_0_ChannelConfig))
        yield '(\n        name='
        yield str(t_1(environment.getattr(l_1_channel, 'name')))
        yield ',\n        settings={\n'
        for l_2_setting in environment.getattr(l_1_channel, 'settings'):
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
        yield '        },\n    ),\n'
    l_1_channel = missing
    yield ')\n'
    if (t_2((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'mcp_servers_constant')))
        yield '\n'
    if (not (undefined(name='memoryless') if l_0_memoryless is missing else l_0_memoryless)):
        pass
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'fragment_constant')))
        yield '\n'
    yield '\n\ndef build_turn(session_id: str, resources: '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'HostResources'))
    yield ', audience: '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'Audience'))
    yield ') -> '
    yield str((undefined(name='TurnSetup') if l_0_TurnSetup is missing else l_0_TurnSetup))
    yield ':\n    cwd = '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'pathlib', 'Path'))
    yield '.cwd()\n    '
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'catalog'), 'cwd'))
    yield '\n'
    if (undefined(name='memoryless') if l_0_memoryless is missing else l_0_memoryless):
        pass
        yield '    return '
        yield str((undefined(name='TurnSetup') if l_0_TurnSetup is missing else l_0_TurnSetup))
        yield '(catalog=catalog)\n'
    else:
        pass
        yield '    '
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'wire'), 'cwd', ', session_scope=session_id, resources=resources, audience=audience'))
        yield '\n    return '
        yield str((undefined(name='TurnSetup') if l_0_TurnSetup is missing else l_0_TurnSetup))
        yield '(catalog=catalog, options=wired.options, close=wired.close)\n'
    yield '\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_signature')))
    yield '\n    return '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'serve_channel'))
    yield '(\n        spec_name=SPEC_NAME,\n        model=MODEL,\n        instructions=INSTRUCTIONS,\n        channels=CHANNELS,\n        session_key=SESSION_KEY,\n        build_turn=build_turn,\n        argv=argv,\n'
    if (t_2((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield '        mcp_servers=MCP_SERVERS,\n'
    yield '    )\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_guard')))
    yield '\n'

blocks = {}
debug_info = '1=29&2=31&3=34&4=37&5=39&6=41&7=43&8=47&9=49&11=51&12=54&13=57&15=66&22=74&23=76&25=78&26=80&30=83&31=89&32=91&33=93&34=96&36=101&37=103&41=106&42=108&50=110&56=114'