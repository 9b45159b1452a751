"""Reporting: the comparison's result and its files.

``_report`` is ``Report``; the diagnosis (``_diagnosis``) and every renderer read it as
``_contents.ReportData``: terminal and report.txt (``_text``), the HTML page (``_html``, its
plots ``_svg``, its script and style in ``assets/``), report.json and pairs.csv in the format
registry (``_formats``), the per-step view (``_steps``). Files are replaced all together
(``_atomic``, its file steps ``_staging``; temporaries of gone writers: ``_leftovers``).
"""
