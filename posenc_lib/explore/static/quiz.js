// Self-check questions (posenc_lib.questions): multiple choice and numeric answers, checked on the page
// with feedback on each answer. The numeric answers were computed by posenc_lib when the notebook ran.
function parseNumber(text) {
  // "0.125", "-1.5e3", "12,345", "1/8", "2^-3" or "2**-3"; null if it is none of these
  const t = text.trim().replace(/\u2212/g, "-").replace(/\s+/g, "");
  const plain = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;
  if (/^[-+]?\d{1,3}(,\d{3})+(\.\d*)?$/.test(t)) return Number(t.replace(/,/g, ""));
  if (plain.test(t)) return Number(t);
  const ratio = t.match(/^([-+]?[\d.]+)\/([\d.]+)$/);
  if (ratio && plain.test(ratio[1]) && plain.test(ratio[2])) return Number(ratio[1]) / Number(ratio[2]);
  const powerOf = t.match(/^([-+]?[\d.]+)(?:\^|\*\*)\(?([-+]?[\d.]+)\)?$/);
  if (powerOf && plain.test(powerOf[1]) && plain.test(powerOf[2])) return Number(powerOf[1]) ** Number(powerOf[2]);
  return null;
}
let quizCount = 0;
KINDS.quiz = {
  start(root) {
    const { questions, title } = JSON.parse(root.querySelector(":scope > script.pe-params").textContent);
    root.querySelector(":scope > .pe-nojs")?.remove();
    const responses = {};
    const answers = Object.fromEntries(questions.map((q) => [q.label, q.type === "numeric" ? q.answer : q.options.findIndex((o) => o.correct)]));
    const save = () => publish(root, { kind: "quiz", params: { labels: questions.map((q) => q.label) }, drawn: { answers }, responses });
    const group = quizCount++;
    root.append(h("p", { class: "pe-title" }, h("strong", {}, title)));
    questions.forEach((q, number) => {
      const feedback = h("p", { class: "pe-feedback", role: "status" });
      const fieldset = h("fieldset", { class: "pe-question", "data-pe-label": q.label },
        h("legend", {}, h("span", { class: "pe-qnum" }, `${number + 1}. `), q.prompt));
      const reveal = h("button", { type: "button", class: "pe-button pe-reveal", hidden: true }, "Show the answer");
      const say = (result, ...parts) => {
        fieldset.setAttribute("data-pe-result", result);
        feedback.replaceChildren(h("strong", {}, result === "correct" ? "Right. " : result === "wrong" ? "Not quite. " : "Answer: "), parts.filter(Boolean).join(" "));
        if (result === "wrong") reveal.hidden = false;
      };
      if (q.type === "choice") {
        const name = `pe-quiz-${group}-${number}`;
        const options = h("div", { class: "pe-options" }, q.options.map((option, i) => h("label", { class: "pe-option" },
          h("input", { type: "radio", name, value: i, onchange: () => {
            responses[q.label] = { given: i, result: option.correct ? "correct" : "wrong" };
            say(responses[q.label].result, option.feedback, option.correct ? q.explanation : "");
            save();
          } }), " ", option.text)));
        reveal.addEventListener("click", () => say("shown", q.options[answers[q.label]].text, q.explanation));
        fieldset.append(options);
      } else {
        const input = h("input", { type: "text", inputmode: "decimal", autocomplete: "off", class: "pe-input", size: 12 });
        const check = () => {
          const given = parseNumber(input.value);
          let result = "wrong", parts;
          if (given === null) parts = ["Type a number, e.g. 0.125, 1/8 or 2^-3."];
          else if (Math.abs(given - q.answer) <= q.tolerance) { result = "correct"; parts = [q.explanation]; }
          else {
            const known = q.wrong.find((w) => Math.abs(given - w.value) <= w.tolerance);
            parts = [known ? known.feedback : q.hint || "Try again, or show the answer."];
          }
          responses[q.label] = { given, result };
          say(result, ...parts);
          save();
        };
        input.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); check(); } });
        reveal.addEventListener("click", () => say("shown", `${q.answer_text}${q.unit ? ` ${q.unit}` : ""}.`, q.explanation));
        fieldset.append(h("div", { class: "pe-answer" },
          h("label", { class: "pe-control" }, h("span", { class: "pe-name" }, "Your answer"), input, q.unit ? h("span", { class: "pe-unit" }, q.unit) : null),
          h("button", { type: "button", class: "pe-button", onclick: check }, "Check")));
      }
      fieldset.append(feedback, reveal);
      root.append(fieldset);
    });
    save();
  },
};
