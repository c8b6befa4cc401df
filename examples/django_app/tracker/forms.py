"""The contact form a visitor fills in, with the hidden field ("website") that only a spam robot
fills: its message is answered as any other and dropped, as contact forms commonly do."""

from django import forms


class ContactForm(forms.Form):
    name = forms.CharField(max_length=120)
    email = forms.EmailField()
    subject = forms.CharField(max_length=200)
    message = forms.CharField(widget=forms.Textarea)
    website = forms.CharField(required=False, widget=forms.HiddenInput)  # the honeypot
