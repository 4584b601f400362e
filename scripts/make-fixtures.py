#!/usr/bin/env python3
"""Writes tests/fixtures/formats/: one small file per format ape-chat reads,
each by an independent writer (python-pptx, openpyxl, odfpy, ebooklib, the
standard library's email and mailbox, nbformat-shaped JSON), and each holding
one fact found nowhere else, so a test can ask for it and check the source
and its location.

usage: scripts/make-fixtures.py   (installs its writers into a private venv
       under ~/.cache/ape-chat/fixture-venv on first run)

The files are committed; run this only to change them. Fixed timestamps keep
the output byte-stable where the writers allow it.
"""
import os
import subprocess
import sys
import venv
from pathlib import Path

WRITERS = ["python-pptx==1.0.2", "openpyxl==3.1.5", "odfpy==1.4.1", "ebooklib==0.20",
           "python-docx==1.2.0", "msoffcrypto-tool==5.4.2"]
FIXED = __import__("datetime").datetime(2026, 1, 1)
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "formats"
# Files that must be skipped with a reason (the rest are made by the tests).
FAULTS = ROOT / "tests" / "fixtures" / "faults"


def ensure_venv():
    cache = Path(os.environ.get("APE_CHAT_CACHE_DIR", Path.home() / ".cache" / "ape-chat"))
    env = cache / "fixture-venv"
    py = env / "bin" / "python"
    if not py.exists():
        venv.create(env, with_pip=True)
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", *WRITERS])
    if Path(sys.executable).resolve() != py.resolve():
        os.execv(py, [py, __file__, *sys.argv[1:]])


def pptx(path):
    from pptx import Presentation
    p = Presentation()
    s1 = p.slides.add_slide(p.slide_layouts[1])
    s1.shapes.title.text = "Quarterly review"
    s1.placeholders[1].text = "Revenue grew in every region."
    s2 = p.slides.add_slide(p.slide_layouts[1])
    s2.shapes.title.text = "Launch plan"
    s2.placeholders[1].text = "The Heron launch is scheduled for the ninth of October."
    s2.notes_slide.notes_text_frame.text = "Speaker note: the Heron budget is 40,000 euros."
    p.core_properties.modified = p.core_properties.created = FIXED
    p.save(path)


def xlsx(path):
    from openpyxl import Workbook
    wb = Workbook()
    ws = wb.active
    ws.title = "Staff"
    ws.append(["Name", "Team", "Start"])
    for i in range(40):
        ws.append([f"Person {i}", "Ops", f"2024-{i % 12 + 1:02}"])
    ws.append(["Marisol Quintero", "Lighthouse maintenance", "2019-05"])
    inv = wb.create_sheet("Inventory")
    inv.append(["Item", "Count"])
    inv.append(["Lantern wicks", 312])
    wb.properties.created = wb.properties.modified = FIXED
    wb.save(path)


def odt(path):
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P
    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text="Field guide"))
    doc.text.addElement(P(text="The kestrel hovers facing into the wind."))
    doc.text.addElement(H(outlinelevel=2, text="Nesting"))
    doc.text.addElement(P(text="Kestrels on Skomer island nest in old crow burrows."))
    doc.save(str(path))


def odp(path):
    from odf.opendocument import OpenDocumentPresentation
    from odf.style import MasterPage, PageLayout, Style
    from odf.draw import Frame, Page, TextBox
    from odf.presentation import Notes
    from odf.namespaces import PRESENTATIONNS
    from odf.text import P
    doc = OpenDocumentPresentation()
    layout = PageLayout(name="L")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    def text_frame(text, cls=None, y="5cm", height="10cm"):
        """A frame holding one paragraph, of presentation class `cls`."""
        frame = Frame(width="20cm", height=height, x="1cm", y=y)
        if cls:
            frame.setAttrNS(PRESENTATIONNS, "class", cls)
        box = TextBox()
        box.addElement(P(text=text))
        frame.addElement(box)
        return frame

    for n, (title, body, note) in enumerate([
        ("Welcome", "Agenda for the offsite.", None),
        ("Catering", "Lunch is served in the glasshouse.", "Ask Priya about the vegan menu."),
    ], start=1):
        page = Page(masterpagename=master, name=f"page{n}")
        page.addElement(text_frame(title, "title", y="1cm", height="3cm"))
        page.addElement(text_frame(body))
        if note:
            notes = Notes()
            notes.addElement(text_frame(note, "notes"))
            page.addElement(notes)
        doc.presentation.addElement(page)
    doc.save(str(path))


def ods(path):
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P
    doc = OpenDocumentSpreadsheet()
    t = Table(name="Tides")
    for row in [["Harbour", "High tide"], ["Porthgain", "06:42"], ["Solva", "07:15"]]:
        tr = TableRow()
        for v in row:
            c = TableCell(valuetype="string")
            c.addElement(P(text=v))
            tr.addElement(c)
        t.addElement(tr)
    doc.spreadsheet.addElement(t)
    doc.save(str(path))


def epub(path):
    from ebooklib import epub as e
    book = e.EpubBook()
    book.set_identifier("ape-chat-fixture")
    book.set_title("Voyages")
    book.set_language("en")
    c1 = e.EpubHtml(title="Departure", file_name="c1.xhtml")
    c1.content = "<h1>Departure</h1><p>The ship left Falmouth at dawn.</p>"
    c2 = e.EpubHtml(title="The Azores", file_name="c2.xhtml")
    c2.content = "<h1>The Azores</h1><p>In Horta the crew painted the ship's name on the harbour wall.</p>"
    for c in (c1, c2):
        book.add_item(c)
    book.toc = (c1, c2)
    book.add_item(e.EpubNcx())
    book.add_item(e.EpubNav())
    book.spine = [c1, c2]
    e.write_epub(str(path), book)


def mail(eml_path, mbox_path):
    import mailbox
    from email.message import EmailMessage
    from email.utils import format_datetime
    from datetime import datetime, timezone

    def msg(subject, body, html=None, attach=None, day=3):
        m = EmailMessage()
        m["From"] = "Ada Byrne <ada@example.org>"
        m["To"] = "ops@example.org"
        m["Subject"] = subject
        m["Date"] = format_datetime(datetime(2026, 3, day, 9, 0, tzinfo=timezone.utc))
        m.set_content(body)
        if html:
            m.add_alternative(html, subtype="html")
        if attach:
            m.add_attachment(b"%PDF-1.4 stub", maintype="application", subtype="pdf", filename=attach)
        return m

    m = msg("Generator test", "The standby generator is tested every Thursday at noon.",
            html="<p>The standby generator is tested every <b>Thursday</b> at noon.</p>",
            attach="checklist.pdf")
    eml_path.write_bytes(bytes(m))
    if mbox_path.exists():
        mbox_path.unlink()
    box = mailbox.mbox(str(mbox_path))
    box.add(msg("Parking", "Visitors park behind the boathouse.", day=1))
    box.add(msg("Keys", "The spare key to the radio room hangs in the chart cupboard.", day=2))
    box.flush()
    box.close()


def notebook(path):
    import json
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Churn analysis\n", "Loading the data."]},
            {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": ["import pandas as pd"],
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["OUTPUT-NOT-INDEXED"]}]},
            {"cell_type": "markdown", "metadata": {}, "source": "Monthly churn among annual subscribers is 1.7 percent."},
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1))


def plain(out):
    (out / "tides.csv").write_text("Station,Surveyor,Depth\nNorth buoy,Okafor,12\nHarbour mouth,Lindqvist,7\n")
    (out / "moorings.tsv").write_text("Berth\tVessel\nB4\tCormorant\nB5\tPetrel\n")
    (out / "NOTES").write_text("Notes without an extension.\n\nThe fog signal sounds twice every thirty seconds.\n")
    (out / "inventory.xml").write_text('<?xml version="1.0"?>\n<stores>\n  <item name="flares" count="24">Flares are kept in the red locker.</item>\n</stores>\n')
    (out / "beacon.log").write_text("2026-03-01 04:12 beacon restarted\n2026-03-01 04:13 beacon frequency set to 287 kHz\n")


def encrypted_docx(path):
    """A Word document saved with a password, as Office encrypts it."""
    import io
    import docx
    import msoffcrypto.format.ooxml
    d = docx.Document()
    d.add_paragraph("The vault code is never indexed.")
    d.core_properties.created = d.core_properties.modified = FIXED
    plain = io.BytesIO()
    d.save(plain)
    plain.seek(0)
    with open(path, "wb") as out:
        msoffcrypto.format.ooxml.OOXMLFile(plain).encrypt("secret", out)


def main():
    ensure_venv()
    OUT.mkdir(parents=True, exist_ok=True)
    pptx(OUT / "review.pptx")
    xlsx(OUT / "staff.xlsx")
    odt(OUT / "guide.odt")
    odp(OUT / "offsite.odp")
    ods(OUT / "tides.ods")
    epub(OUT / "voyages.epub")
    mail(OUT / "generator.eml", OUT / "station.mbox")
    notebook(OUT / "churn.ipynb")
    plain(OUT)
    FAULTS.mkdir(parents=True, exist_ok=True)
    encrypted_docx(FAULTS / "locked.docx")
    print(f"wrote {len(list(OUT.iterdir()))} fixtures to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
