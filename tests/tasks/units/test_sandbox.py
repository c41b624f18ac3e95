"""The bounded sandbox, one budget at a time: each operation that can build much from little is
refused with the size it would have built, just past its limit, and renders as jinja2 does
below it."""

from __future__ import annotations

import random
from typing import Any

import jinja2
import pytest

from pytest_llmjudge.tasks.sandbox import (
    MAX_BUILT,
    MAX_CHARS,
    MAX_STEPS,
    TemplateLimitError,
    compile_template,
    render,
    unsafe_names,
)

HALF = "x" * (MAX_CHARS // 2)  # two of them, with the two characters each is counted with, pass the limit
MILLION = "y" * 1_000_000


def rendered(source: str, **context: Any) -> str:
    return render(compile_template(source), context)


def refused(source: str, **context: Any) -> str:
    with pytest.raises(TemplateLimitError) as caught:
        rendered(source, **context)
    return str(caught.value)


def test_the_limits() -> None:
    assert (MAX_CHARS, MAX_BUILT, MAX_STEPS) == (4_000_000, 16_000_000, 200_000)


# -- ~ -------------------------------------------------------------------------------------------------


def test_a_concatenation_renders_as_jinja2_does() -> None:
    assert rendered("{{ a ~ '-' ~ b ~ 3 }}", a="x", b="y") == "x-y3"


def test_a_concatenation_past_the_limit_is_refused_before_it_is_built() -> None:
    message = refused("{% set s = half ~ half %}{{ s|length }}", half=HALF)
    assert message == "a value of 4,000,004 characters (the limit is 4,000,000)"


def test_a_concatenation_inside_a_concatenation_is_checked_too() -> None:
    message = refused("{% set s = 'a' ~ (half ~ half) %}{{ s|length }}", half=HALF)
    assert message == "a value of 4,000,004 characters (the limit is 4,000,000)"


def test_a_concatenation_in_a_macro_on_a_later_line_is_checked() -> None:
    source = "{% macro twice(s) %}\n{{ (s ~ s)|length }}\n{% endmacro %}{{ twice(half) }}"
    assert refused(source, half=HALF) == "a value of 4,000,004 characters (the limit is 4,000,000)"


def test_what_all_concatenations_of_a_render_build_together_is_bounded() -> None:
    # five concatenations of about 3.5 million characters each: each alone is within the limit
    source = "{% for i in range(5) %}{% set s = m ~ m ~ m ~ half %}{{ s|length }} {% endfor %}"
    message = refused(source, m=MILLION, half=HALF[:500_000])
    assert message == "more than 16,000,000 characters built in one render"


# -- str methods -----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["ljust", "rjust", "center", "zfill"])
def test_padding_a_string_past_the_limit_is_refused(method: str) -> None:
    assert (
        refused(f"{{{{ 'ab'.{method}(4000001) }}}}")
        == "a value of 4,000,001 characters (the limit is 4,000,000)"
    )


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ("'ab'.ljust(4, '-')", "ab--"),
        ("'ab'.rjust(4)", "  ab"),
        ("'ab'.center(6, '*')", "**ab**"),
        ("'7'.zfill(3)", "007"),
    ],
)
def test_padding_a_string_renders_as_python_does(source: str, text: str) -> None:
    assert rendered(f"{{{{ {source} }}}}") == text


def test_expanding_tabs_is_counted_with_the_tab_size_given() -> None:
    message = refused("{% set s = 'a\tb'.expandtabs(4000000) %}{{ s|length }}")
    assert message == "a value of 4,000,003 characters (the limit is 4,000,000)"
    assert rendered("{{ 'a\tb'.expandtabs(4) }}") == "a   b"


def test_expanding_tabs_is_counted_with_eight_columns_a_tab_by_default() -> None:
    tabs = "\t" * 500_000  # 500,000 + 500,000 * 8
    assert (
        refused("{{ tabs.expandtabs() }}", tabs=tabs)
        == "a value of 4,500,000 characters (the limit is 4,000,000)"
    )
    assert rendered("{{ 'a\tb'.expandtabs()|length }}") == "9"


def test_a_string_replace_is_counted_by_the_occurrences_it_replaces() -> None:
    message = refused("{{ 'aaaa'.replace('a', big) }}", big=MILLION + "y")
    assert message == "a value of 4,000,008 characters (the limit is 4,000,000)"  # 4 + 4 * 1,000,001
    assert rendered("{{ 'abab'.replace('a', 'xy') }}") == "xybxyb"


def test_replacing_the_empty_string_counts_every_gap() -> None:
    message = refused("{{ 'aaa'.replace('', big) }}", big=MILLION)
    assert message == "a value of 4,000,003 characters (the limit is 4,000,000)"  # 3 + 4 * 1,000,000
    assert rendered("{{ 'ab'.replace('', '-') }}") == "-a-b-"


def test_a_string_join_is_counted_with_its_separator() -> None:
    message = refused("{{ big.join(['a', 'b', 'c']) }}", big=HALF)
    assert message == "a value of 4,000,014 characters (the limit is 4,000,000)"  # 14 + 2 * 2,000,000
    assert rendered("{{ '-'.join(['a', 'b', 'c']) }}") == "a-b-c"


def test_a_string_join_of_a_generator_reads_it_once() -> None:
    assert rendered("{{ '-'.join(['a', 'b']|map('upper')) }}") == "A-B"
    assert rendered("{{ '-'.join(['a', 'b']|map('upper'), ) }}") == "A-B"


def test_a_string_join_is_called_with_the_arguments_it_was_given() -> None:
    with pytest.raises(TypeError, match="takes exactly one argument"):
        rendered("{{ '-'.join(['a'], 'b') }}")


def test_other_string_methods_are_called_as_they_are() -> None:
    assert rendered("{{ 'a,b'.split(',') }} {{ 'ab'.upper() }}") == "['a', 'b'] AB"


# -- filters ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ 'ab'|center(4000001) }}", "a value of 4,000,001 characters"),
        ("{{ [1, 2]|batch(4000001)|list }}", "a value of 4,000,001 characters"),
        ("{{ [1, 2]|slice(4000001)|list }}", "a value of 4,000,001 characters"),
        ("{{ '%4000001d'|format(1) }}", "a format field wider than 4,000,000 characters: '%4000001'"),
    ],
)
def test_a_filter_that_would_build_past_the_limit_is_refused(source: str, message: str) -> None:
    assert refused(source).startswith(message)


def test_indent_is_counted_by_lines_times_the_width() -> None:
    text = "a\nb\nc"
    assert (
        refused("{{ text|indent(2000000) }}", text=text)
        == "a value of 6,000,005 characters (the limit is 4,000,000)"
    )
    assert rendered("{{ text|indent(2, first=true) }}", text=text) == "  a\n  b\n  c"


def test_indent_by_a_string_is_counted_by_its_length() -> None:
    text = "\n" * 1_000_000  # 1,000,000 + 1,000,001 * 3
    assert (
        refused("{{ text|indent('>>>') }}", text=text)
        == "a value of 4,000,003 characters (the limit is 4,000,000)"
    )
    assert rendered("{{ 'a\nb'|indent('> ') }}") == "a\n> b"


def test_indent_by_default_is_four_spaces_a_line() -> None:
    text = "\n" * 800_000  # 800,000 + 800,001 * 4
    assert (
        refused("{{ text|indent }}", text=text) == "a value of 4,000,004 characters (the limit is 4,000,000)"
    )


def test_wordwrap_is_counted_with_its_wrap_string() -> None:
    text = "x" * 1_500_000  # 1,500,000 * (1 + 2)
    assert refused("{{ text|wordwrap(10, wrapstring='<>') }}", text=text) == (
        "a value of 4,500,000 characters (the limit is 4,000,000)"
    )
    assert rendered("{{ text|wordwrap(10)|length }}", text=text) == str(1_500_000 + 149_999)
    assert rendered("{{ 'aaaa bbbb'|wordwrap(4, wrapstring='|') }}") == "aaaa|bbbb"


def test_replace_as_a_filter_is_counted_as_the_method_is() -> None:
    message = refused("{{ 'aaaa'|replace('a', big) }}", big=MILLION + "y")
    assert message == "a value of 4,000,008 characters (the limit is 4,000,000)"
    assert rendered("{{ 'abab'|replace('a', 'xy', 1) }}") == "xybab"


def test_centering_renders_as_jinja2_does() -> None:
    assert rendered("{{ 'ab'|center(6) }}|{{ [1, 2, 3]|batch(2)|list }}|{{ [1, 2, 3]|slice(2)|list }}") == (
        "  ab  |[[1, 2], [3]]|[[1, 2], [3]]"
    )
    assert rendered("{{ '%03d'|format(7) }}") == "007"


def test_a_join_filter_is_counted_with_its_separator() -> None:
    message = refused("{{ ['a', 'b', 'c']|join(big) }}", big=HALF)
    assert message == "a value of 4,000,014 characters (the limit is 4,000,000)"
    assert rendered("{{ [big]|join(big)|length }}", big=HALF) == str(len(HALF))  # one item: no separator
    assert rendered("{{ []|join(big) }}", big=HALF) == ""


def test_a_join_filter_of_a_generator_and_of_an_attribute_renders_as_jinja2_does() -> None:
    assert rendered("{{ ['a', 'b']|map('upper')|join('-') }}") == "A-B"
    assert rendered("{{ items|join(', ', attribute='n') }}", items=[{"n": 1}, {"n": 2}]) == "1, 2"


# -- str.format --------------------------------------------------------------------------------------


def test_a_format_width_given_as_an_argument_is_checked_before_formatting() -> None:
    message = refused("{{ '{:{w}}x'.format(1, w=4000001) }}")
    assert message == "a value of 4,000,001 characters (the limit is 4,000,000)"  # not 4,000,002: unbuilt
    assert rendered("{{ '{:{w}}|'.format(1, w=3) }}") == "  1|"


def test_a_formatted_string_past_the_limit_is_refused() -> None:
    assert (
        refused("{{ '{}{}'.format(a, a) }}", a=HALF + "x")
        == "a value of 4,000,002 characters (the limit is 4,000,000)"
    )


def test_str_format_renders_as_python_does() -> None:
    assert rendered("{{ '{:,} {name}'.format(1234, name='n') }}") == "1,234 n"


# -- + and * ---------------------------------------------------------------------------------------


def test_adding_strings_past_the_limit_is_refused_before_it_is_built() -> None:
    message = refused("{% set s = a + b %}{{ s|length }}", a=HALF, b=HALF + "x")
    assert message == "a value of 4,000,001 characters (the limit is 4,000,000)"
    assert rendered("{{ a + b }}", a="x", b="y") == "xy"


def test_adding_lists_is_counted_by_what_they_hold() -> None:
    items = ["x" * 1000] * 2000  # 2,006,002 characters printed, though only 2,000 items
    message = refused("{% set s = a + a %}{{ s|length }}", a=items)
    assert message == "a value of 4,012,004 characters (the limit is 4,000,000)"
    assert rendered("{{ (a + a)|length }}", a=items[:10]) == "20"


def test_repeating_a_string_past_the_limit_is_refused_even_once() -> None:
    big = HALF + HALF + "x"
    assert refused("{% set s = big * 1 %}{{ s|length }}", big=big) == (
        "a value of 4,000,001 characters (the limit is 4,000,000)"
    )
    assert refused("{% set s = 3 * big %}{{ s|length }}", big=HALF) == (
        "a value of 6,000,000 characters (the limit is 4,000,000)"
    )
    assert rendered("{% set s = 2 * big %}{{ s|length }}", big=HALF) == "4000000"  # at the limit
    assert rendered("{{ 'ab' * 3 }}|{{ 3 * [1] }}|{{ 'ab' * 0 }}") == "ababab|[1, 1, 1]|"


def test_the_remainder_of_numbers_is_computed() -> None:
    assert rendered("{{ 7 % 3 }} {{ n % 4 }}", n=10) == "1 2"


# -- numbers ---------------------------------------------------------------------------------------


def test_a_power_of_up_to_ten_thousand_digits_is_computed_one_more_is_refused() -> None:
    assert rendered("{{ (base ** 16608) > 0 }}", base=2) == "True"  # 2 * 16,608 bits: 10,000 digits
    assert (
        refused("{{ (base ** 16610) > 0 }}", base=2)
        == "a number of about 10,001 digits (the limit is 10,000)"
    )


def test_a_large_number_to_the_first_power_is_checked_too() -> None:
    assert (
        refused("{{ (n ** 1) > 0 }}", n=2**40_000) == "a number of about 12,042 digits (the limit is 10,000)"
    )
    assert rendered("{{ n ** 0 }} {{ 2 ** 10 }}", n=2**40_000) == "1 1024"


def test_a_product_of_large_numbers_is_checked_by_their_digits() -> None:
    big = 2**33_000
    assert refused("{{ (n * n) > 0 }}", n=big) == "a number of about 19,869 digits (the limit is 10,000)"
    assert rendered("{{ 6 * n }}", n=7) == "42"


def test_a_percent_format_past_the_limit_is_refused_and_one_within_renders() -> None:
    assert (
        refused("{{ '%s%s' % (a, a) }}", a=HALF + "x")
        == "a value of 4,000,002 characters (the limit is 4,000,000)"
    )
    assert rendered("{{ '%05.1f' % 3.14159 }}") == "003.1"


# -- lipsum ------------------------------------------------------------------------------------------


def test_lipsum_is_counted_by_paragraphs_times_words() -> None:
    message = refused("{{ lipsum(1000, max=400) }}")
    assert message == "a value of 4,800,000 characters (the limit is 4,000,000)"  # 1000 * 400 * 12


def test_lipsum_by_default_is_five_html_paragraphs_of_twenty_to_ninety_nine_words() -> None:
    random.seed(7)
    assert rendered("{{ lipsum() }}").count("<p>") == 5
    words = [len(p.split()) for p in rendered("{{ lipsum(1000, false) }}").split("\n\n")]
    assert (len(words), min(words), max(words)) == (1000, 20, 99)


def test_lipsum_passes_its_arguments_on() -> None:
    text = rendered("{{ lipsum(2, false, 5, 6) }}")
    paragraphs = text.split("\n\n")
    assert len(paragraphs) == 2 and "<p>" not in text
    assert all(5 <= len(p.split()) <= 6 for p in paragraphs)
    assert rendered("{{ lipsum(1) }}").startswith("<p>")


# -- loops and calls -----------------------------------------------------------------------------------


def test_range_up_to_the_step_limit_is_allowed() -> None:
    assert rendered("{{ range(200000)|length }}") == "200000"
    assert refused("{{ range(200001)|length }}") == "range of 200,001 numbers (the limit is 200,000)"


def test_each_loop_iteration_is_one_step_of_the_budget() -> None:
    source = "{% for i in items %}{% endfor %}ok"
    assert rendered(source, items=[0] * 200_000) == "ok"
    assert refused(source, items=[0] * 200_001) == "more than 200,000 loop iterations and calls in one render"


def test_a_call_costs_five_steps() -> None:
    source = "{% for i in range(n) %}{% endfor %}ok"
    assert rendered(source, n=199_995) == "ok"  # 5 for the call, 199,995 for the loop
    assert refused(source, n=199_996) == "more than 200,000 loop iterations and calls in one render"


def test_a_printed_value_past_the_limit_is_refused_before_it_is_printed() -> None:
    items = ["x" * 1000] * 4000  # about 4,012,002 characters when printed (counted until past the limit)
    message = refused("{{ items }}", items=items)
    assert message.startswith("a value of 4,0") and message.endswith(" characters (the limit is 4,000,000)")


def test_the_rendered_text_past_the_limit_is_refused() -> None:
    message = refused("{{ half }}{{ half }}{{ 'x' }}", half=HALF)
    assert message == "the rendered text is over 4,000,000 characters"
    assert len(rendered("{{ half }}{{ half }}", half=HALF)) == MAX_CHARS


# -- private attributes ------------------------------------------------------------------------------


def test_the_private_attributes_a_template_names_are_found_with_their_lines() -> None:
    source = "{{ x.__mro__ }}\n{{ x['__globals__'] }}\n{{ x|attr('__class__') }}\n{{ x.name }} {{ x['a'] }}"
    assert unsafe_names(source) == [("__mro__", 1), ("__globals__", 2), ("__class__", 3)]  # by line
    assert unsafe_names("{{ x|attr(name) }} {{ x[0] }} {{ x|attr() }}") == []


def test_a_private_attribute_reached_at_render_time_is_refused() -> None:
    with pytest.raises(jinja2.exceptions.SecurityError):
        rendered("{{ x[a ~ b] }}", x={}, a="__cla", b="ss__")
