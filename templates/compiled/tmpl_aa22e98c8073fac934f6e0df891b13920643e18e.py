from jinja2.runtime import LoopContext, Macro, Markup, Namespace, TemplateNotFound, TemplateReference, TemplateRuntimeError, Undefined, escape, identity, internalcode, markup_join, missing, str_join
name = '_shared/python.j2'

def root(context, missing=missing):
    resolve = context.resolve_or_missing
    undefined = environment.undefined
    concat = environment.concat
    cond_expr_undefined = Undefined
    if 0: yield None
    l_0_model_literal = l_0_model_tuple = l_0_agent_constants = l_0_mcp_servers_constant = l_0_fragment_constant = l_0_wire = l_0_catalog = l_0_build_session = l_0_main_signature = l_0_main_guard = missing
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
    def macro(l_1_model):
        t_4 = []
        l_1_imports = resolve('imports')
        if l_1_model is missing:
            l_1_model = undefined("parameter 'model' was not provided", name='model')
        pass
        if environment.getattr(l_1_model, 'secret'):
            pass
            t_4.extend((
                str(context.call(environment.getattr((undefined(name='imports') if l_1_imports is missing else l_1_imports), 'use'), 'specwire.runtime.bundle', 'SecretRef')),
                '(',
                str(t_1(environment.getattr(l_1_model, 'value'))),
                ')',
            ))
        else:
            pass
            t_4.append(
                str(t_1(environment.getattr(l_1_model, 'value'))),
            )
        return concat(t_4)
    context.exported_vars.add('model_literal')
    context.vars['model_literal'] = l_0_model_literal = Macro(environment, macro, 'model_literal', ('model',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_models):
        t_5 = []
        if l_1_models is missing:
            l_1_models = undefined("parameter 'models' was not provided", name='models')
        pass
        t_5.append(
            '(',
        )
        l_2_loop = missing
        for l_2_model, l_2_loop in LoopContext(l_1_models, undefined):
            _loop_vars = {}
            pass
            t_5.append(
                str(context.call((undefined(name='model_literal') if l_0_model_literal is missing else l_0_model_literal), l_2_model, _loop_vars=_loop_vars)),
            )
            if (not environment.getattr(l_2_loop, 'last')):
                pass
                t_5.append(
                    ', ',
                )
            elif (environment.getattr(l_2_loop, 'length') == 1):
                pass
                t_5.append(
                    ',',
                )
        l_2_loop = l_2_model = missing
        t_5.append(
            ')',
        )
        return concat(t_5)
    context.exported_vars.add('model_tuple')
    context.vars['model_tuple'] = l_0_model_tuple = Macro(environment, macro, 'model_tuple', ('models',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro():
        t_6 = []
        l_1_spec_name = resolve('spec_name')
        l_1_model = resolve('model')
        l_1_instructions = resolve('instructions')
        l_1_tools = resolve('tools')
        l_1_bash_options = resolve('bash_options')
        pass
        t_6.extend((
            'SPEC_NAME = ',
            str(t_1((undefined(name='spec_name') if l_1_spec_name is missing else l_1_spec_name))),
            '\nMODEL = ',
            str(context.call((undefined(name='model_literal') if l_0_model_literal is missing else l_0_model_literal), (undefined(name='model') if l_1_model is missing else l_1_model))),
            '\nINSTRUCTIONS = ',
            str(t_2((undefined(name='instructions') if l_1_instructions is missing else l_1_instructions))),
            '\nTOOLS: tuple[str, ...] = ',
            str(t_1((undefined(name='tools') if l_1_tools is missing else l_1_tools))),
        ))
        if (t_3((undefined(name='bash_options') if l_1_bash_options is missing else l_1_bash_options)) and (undefined(name='bash_options') if l_1_bash_options is missing else l_1_bash_options)):
            pass
            t_6.extend((
                '\nBASH_OPTIONS = ',
                str(t_1((undefined(name='bash_options') if l_1_bash_options is missing else l_1_bash_options))),
            ))
        return concat(t_6)
    context.exported_vars.add('agent_constants')
    context.vars['agent_constants'] = l_0_agent_constants = Macro(environment, macro, 'agent_constants', (), False, False, False, context.eval_ctx.autoescape)
    def macro():
        t_7 = []
        l_1_mcp_servers = resolve('mcp_servers')
        pass
        t_7.append(
            'MCP_SERVERS = {\n',
        )
        for l_2_server in (undefined(name='mcp_servers') if l_1_mcp_servers is missing else l_1_mcp_servers):
            _loop_vars = {}
            pass
            t_7.extend((
                '    ',
                str(t_1(environment.getattr(l_2_server, 'name'))),
                ': {\n        "transport": ',
                str(t_1(environment.getattr(l_2_server, 'transport'))),
                ',\n',
            ))
            if (environment.getattr(l_2_server, 'transport') == 'stdio'):
                pass
                t_7.extend((
                    '        "command": ',
                    str(t_1(environment.getattr(l_2_server, 'command'))),
                    ',\n        "args": [\n',
                ))
                for l_3_arg in environment.getattr(l_2_server, 'args'):
                    _loop_vars = {}
                    pass
                    t_7.extend((
                        '            ',
                        str(t_1(l_3_arg)),
                        ',\n',
                    ))
                l_3_arg = missing
                t_7.append(
                    '        ],\n        "env": {\n',
                )
            else:
                pass
                t_7.extend((
                    '        "url": ',
                    str(t_1(environment.getattr(l_2_server, 'url'))),
                    ',\n        "headers": {\n',
                ))
            for l_3_setting in environment.getattr(l_2_server, 'settings'):
                l_3_imports = resolve('imports')
                _loop_vars = {}
                pass
                if environment.getattr(l_3_setting, 'secret'):
                    pass
                    t_7.extend((
                        '            ',
                        str(t_1(environment.getattr(l_3_setting, 'key'))),
                        ': ',
                        str(context.call(environment.getattr((undefined(name='imports') if l_3_imports is missing else l_3_imports), 'use'), 'specwire.runtime.bundle', 'SecretRef', _loop_vars=_loop_vars)),
                        '(',
                        str(t_1(environment.getattr(l_3_setting, 'value'))),
                        '),\n',
                    ))
                else:
                    pass
                    t_7.extend((
                        '            ',
                        str(t_1(environment.getattr(l_3_setting, 'key'))),
                        ': ',
                        str(t_1(environment.getattr(l_3_setting, 'value'))),
                        ',\n',
                    ))
            l_3_setting = l_3_imports = missing
            t_7.extend((
                '        },\n        "optional": ',
                str(t_1(environment.getattr(l_2_server, 'optional'))),
                ',\n',
            ))
            if (not environment.getattr(l_2_server, 'sandbox')):
                pass
                t_7.append(
                    '        "sandbox": False,\n',
                )
            if (environment.getattr(l_2_server, 'network') == 'outbound'):
                pass
                t_7.append(
                    '        "network": "outbound",\n',
                )
            t_7.append(
                '    },\n',
            )
        l_2_server = missing
        t_7.append(
            '}',
        )
        return concat(t_7)
    context.exported_vars.add('mcp_servers_constant')
    context.vars['mcp_servers_constant'] = l_0_mcp_servers_constant = Macro(environment, macro, 'mcp_servers_constant', (), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro():
        t_8 = []
        l_1_fragment = resolve('fragment')
        pass
        t_8.extend((
            'MEMORY_FRAGMENT = ',
            str(t_1((undefined(name='fragment') if l_1_fragment is missing else l_1_fragment))),
        ))
        return concat(t_8)
    context.exported_vars.add('fragment_constant')
    context.vars['fragment_constant'] = l_0_fragment_constant = Macro(environment, macro, 'fragment_constant', (), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_cwd, l_1_extra):
        t_9 = []
        l_1_imports = resolve('imports')
        if l_1_cwd is missing:
            l_1_cwd = undefined("parameter 'cwd' was not provided", name='cwd')
        if l_1_extra is missing:
            l_1_extra = ''
        pass
        t_9.extend((
            'wired = ',
            str(context.call(environment.getattr((undefined(name='imports') if l_1_imports is missing else l_1_imports), 'use'), 'specwire.runtime.bundle', 'wire_memory')),
            '(MEMORY_FRAGMENT, ',
            str(context.call(environment.getattr((undefined(name='imports') if l_1_imports is missing else l_1_imports), 'use'), 'specwire.runtime.bundle', 'MemoryDeps')),
            '(catalog=catalog, cwd=',
            str(l_1_cwd),
            str(l_1_extra),
            '))',
        ))
        return concat(t_9)
    context.exported_vars.add('wire')
    context.vars['wire'] = l_0_wire = Macro(environment, macro, 'wire', ('cwd', 'extra'), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro(l_1_cwd):
        t_10 = []
        l_1_imports = resolve('imports')
        l_1_bash_options = resolve('bash_options')
        if l_1_cwd is missing:
            l_1_cwd = undefined("parameter 'cwd' was not provided", name='cwd')
        pass
        t_10.extend((
            'catalog = ',
            str(context.call(environment.getattr((undefined(name='imports') if l_1_imports is missing else l_1_imports), 'use'), 'specwire.runtime.bundle', 'builtin_catalog')),
            '(TOOLS, ',
            str(l_1_cwd),
        ))
        if (t_3((undefined(name='bash_options') if l_1_bash_options is missing else l_1_bash_options)) and (undefined(name='bash_options') if l_1_bash_options is missing else l_1_bash_options)):
            pass
            t_10.append(
                ', BASH_OPTIONS',
            )
        t_10.append(
            ')',
        )
        return concat(t_10)
    context.exported_vars.add('catalog')
    context.vars['catalog'] = l_0_catalog = Macro(environment, macro, 'catalog', ('cwd',), False, False, False, context.eval_ctx.autoescape)
    def macro(l_1_audience):
        t_11 = []
        l_1_imports = resolve('imports')
        l_1_memoryless = resolve('memoryless')
        l_1_TurnSetup = missing
        if l_1_audience is missing:
            l_1_audience = False
        pass
        l_1_TurnSetup = context.call(environment.getattr((undefined(name='imports') if l_1_imports is missing else l_1_imports), 'use'), 'specwire.runtime.bundle', 'TurnSetup')
        if l_1_audience:
            pass
            t_11.extend((
                'def build_session(audience: ',
                str(context.call(environment.getattr((undefined(name='imports') if l_1_imports is missing else l_1_imports), 'use'), 'specwire.runtime.bundle', 'Audience')),
                ') -> ',
                str((undefined(name='TurnSetup') if l_1_TurnSetup is missing else l_1_TurnSetup)),
                ':\n',
            ))
        else:
            pass
            t_11.extend((
                'def build_session() -> ',
                str((undefined(name='TurnSetup') if l_1_TurnSetup is missing else l_1_TurnSetup)),
                ':\n',
            ))
        t_11.extend((
            '    cwd = ',
            str(context.call(environment.getattr((undefined(name='imports') if l_1_imports is missing else l_1_imports), 'use'), 'pathlib', 'Path')),
            '.cwd()\n    ',
            str(context.call((undefined(name='catalog') if l_0_catalog is missing else l_0_catalog), 'cwd')),
            '\n',
        ))
        if (undefined(name='memoryless') if l_1_memoryless is missing else l_1_memoryless):
            pass
            t_11.extend((
                '    return ',
                str((undefined(name='TurnSetup') if l_1_TurnSetup is missing else l_1_TurnSetup)),
                '(catalog=catalog)\n',
            ))
        else:
            pass
            t_11.extend((
                '    ',
                str(context.call((undefined(name='wire') if l_0_wire is missing else l_0_wire), 'cwd', (', audience=audience' if l_1_audience else ''))),
                '\n    return ',
                str((undefined(name='TurnSetup') if l_1_TurnSetup is missing else l_1_TurnSetup)),
                '(catalog=catalog, options=wired.options, close=wired.close)\n',
            ))
        return concat(t_11)
    context.exported_vars.add('build_session')
    context.vars['build_session'] = l_0_build_session = Macro(environment, macro, 'build_session', ('audience',), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro():
        t_12 = []
        pass
        t_12.append(
            'def main(argv: list[str] | None = None) -> int:',
        )
        return concat(t_12)
    context.exported_vars.add('main_signature')
    context.vars['main_signature'] = l_0_main_signature = Macro(environment, macro, 'main_signature', (), False, False, False, context.eval_ctx.autoescape)
    yield '\n'
    def macro():
        t_13 = []
        l_1_imports = resolve('imports')
        pass
        t_13.extend((
            'if __name__ == "__main__":\n    raise SystemExit(',
            str(context.call(environment.getattr((undefined(name='imports') if l_1_imports is missing else l_1_imports), 'use'), 'specwire.runtime.bundle', 'run_bundle')),
            '(SPEC_NAME, main))',
        ))
        return concat(t_13)
    context.exported_vars.add('main_guard')
    context.vars['main_guard'] = l_0_main_guard = Macro(environment, macro, 'main_guard', (), False, False, False, context.eval_ctx.autoescape)

blocks = {}
debug_info = '6=30&7=36&11=52&12=61&15=85&16=95&17=97&18=99&19=101&20=103&22=107&27=112&29=119&30=124&31=126&32=129&33=133&35=136&36=141&41=152&44=155&45=159&46=163&48=174&52=182&53=185&56=190&64=206&65=212&68=218&69=228&72=240&73=249&78=264&79=272&80=273&81=277&83=286&85=291&86=293&87=296&88=300&90=307&91=309&95=316&99=326&101=332'