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
    l_0_memoryless = resolve('memoryless')
    l_0_shared = l_0_TenantConfig = l_0_TurnSetup = missing
    try:
        t_1 = environment.filters['py']
    except KeyError:
        @internalcode
        def t_1(*unused):
            raise TemplateRuntimeError("No filter named 'py' found.")
    try:
        t_2 = environment.tests['none']
    except KeyError:
        @internalcode
        def t_2(*unused):
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
        if (not t_2(environment.getattr(l_1_tenant, 'max_input_tokens'))):
            pass
            yield '        max_input_tokens='
            yield str(t_1(environment.getattr(l_1_tenant, 'max_input_tokens')))
            yield ',\n'
        if (not t_2(environment.getattr(l_1_tenant, 'max_output_tokens'))):
            pass
            yield '        max_output_tokens='
            yield str(t_1(environment.getattr(l_1_tenant, 'max_output_tokens')))
            yield ',\n'
        yield '    ),\n'
    l_1_tenant = missing
    yield ')\n'
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
    yield '(\n        spec_name=SPEC_NAME,\n        model=MODEL,\n        instructions=INSTRUCTIONS,\n        tenants=TENANTS,\n        build_turn=build_turn,\n        argv=argv,\n    )\n\n\n'
    yield str(context.call(environment.getattr((undefined(name='shared') if l_0_shared is missing else l_0_shared), 'main_guard')))
    yield '\n'

blocks = {}
debug_info = '1=27&2=29&3=32&4=35&5=37&6=39&7=43&8=45&9=47&10=50&12=52&13=55&18=60&19=62&23=65&25=73&26=75&27=78&29=83&30=85&34=88&35=90&45=92'