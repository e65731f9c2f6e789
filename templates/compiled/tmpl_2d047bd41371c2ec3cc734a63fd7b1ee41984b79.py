from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = 'managed/agent.py.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_imports = resolve('imports')
    l_0_tenants = resolve('tenants')
    l_0_mcp_servers = resolve('mcp_servers')
    l_0_memoryless = resolve('memoryless')
    l_0_shared = l_0_TenantConfig = l_0_TurnSetup = missing
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
    try:
        t_3 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_3(*unused):
            raise TemplateRuntimeError("No test named 'none' found.")
    pass
    l_0_shared = context.vars['shared'] = environment.get_template('_shared/python.j2', 'managed/agent.py.j2').make_module(context.get_all(), True, {'TenantConfig': l_0_TenantConfig, 'TurnSetup': l_0_TurnSetup, 'shared': l_0_shared})
    context.exported_vars.discard('shared')
    l_0_TenantConfig = context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'TenantConfig')
    context.vars['TenantConfig'] = l_0_TenantConfig
    context.exported_vars.add('TenantConfig')
    l_0_TurnSetup = context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'TurnSetup')
    context.vars['TurnSetup'] = l_0_TurnSetup
    context.exported_vars.add('TurnSetup')
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'agent_constants')))
    yield '\nTENANTS: tuple['
    yield str((undefined(name='TenantConfig') if l_0_TenantConfig is missing else l_0_TenantConfig))
    yield ', ...] = (\n'
    for l_1_tenant in (undefined(name='tenants') if l_0_tenants is missing else l_0_tenants):
        _loop_vars = {}
        pass
        yield '    '
        yield str((undefined(name='TenantConfig') if l_0_TenantConfig is missing else l_0_TenantConfig))
        yield '(\n        id='
        yield str(t_1(environment.getattr(l_1_tenant, 'id')))
        yield ',\n'
        if (not t_3(environment.getattr(l_1_tenant, 'max_input_tokens'))):
            pass
            yield '        max_input_tokens='
            yield str(t_1(environment.getattr(l_1_tenant, 'max_input_tokens')))
            yield ',\n'
        if (not t_3(environment.getattr(l_1_tenant, 'max_output_tokens'))):
            pass
            yield '        max_output_tokens='
            yield str(t_1(environment.getattr(l_1_tenant, 'max_output_tokens')))
            yield ',\n'
        yield '    ),\n'
    l_1_tenant = missing
    yield ')\n'
    if (t_2((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'mcp_servers_constant')))
        yield '\n'
    if (not (undefined(name='memoryless') if l_0_memoryless is missing else l_0_memoryless)):
        pass
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'fragment_constant')))
        yield '\n'
    yield '\n\ndef build_turn(tenant: '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'Tenant'))
    yield ', session_id: str, resources: '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'HostResources'))
    yield ', audience: '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'Audience'))
    yield ') -> '
    yield str((undefined(name='TurnSetup') if l_0_TurnSetup is missing else l_0_TurnSetup))
    yield ':\n    cwd = tenant.workspace\n    '
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
        yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'wire'), 'cwd', ', tenant=tenant, session_scope=session_id, resources=resources, audience=audience'))
        yield '\n    return '
        yield str((undefined(name='TurnSetup') if l_0_TurnSetup is missing else l_0_TurnSetup))
        yield '(catalog=catalog, options=wired.options, close=wired.close)\n'
    yield '\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_signature')))
    yield '\n    return '
    yield str(context.call(environment.getattr((undefined(name='imports') if l_0_imports is missing else l_0_imports), 'use'), 'specwire.runtime.bundle', 'serve_managed'))
    yield '(\n        spec_name=SPEC_NAME,\n        model=MODEL,\n        instructions=INSTRUCTIONS,\n        tenants=TENANTS,\n        build_turn=build_turn,\n        argv=argv,\n'
    if (t_2((undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)) and (undefined(name='mcp_servers') if l_0_mcp_servers is missing else l_0_mcp_servers)):
        pass
        yield '        mcp_servers=MCP_SERVERS,\n'
    yield '    )\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_guard')))
    yield '\n'

blocks = {}
debug_info = '1=34&2=36&3=39&4=42&5=44&6=46&7=50&8=52&9=54&10=57&12=59&13=62&18=67&19=69&21=71&22=73&26=76&28=84&29=86&30=89&32=94&33=96&37=99&38=101&45=103&51=107'